"""References name a registry, a package and a version or the package's digest, and never a credential."""

from __future__ import annotations

import pytest

from occubench.errors import ConfigError
from occubench.hub.refs import Reference, parse

DIGEST = "sha256:" + "ab" * 32


@pytest.mark.parametrize(("text", "expected"), [
    ("oci://127.0.0.1:5000/acme/claims:1.2", Reference("oci", "127.0.0.1:5000/acme/claims", "1.2")),
    (f"oci://ghcr.io/acme/claims@{DIGEST}", Reference("oci", "ghcr.io/acme/claims", None, DIGEST)),
    ("git+https://github.com/acme/claims.git@v1.2", Reference("git", "https://github.com/acme/claims.git", "v1.2")),
    ("git+ssh://git@host/acme/claims.git@1.2", Reference("git", "ssh://git@host/acme/claims.git", "1.2")),
    ("git+file:///srv/claims.git@1.2", Reference("git", "file:///srv/claims.git", "1.2")),
    (f"git+git://127.0.0.1:9418/claims.git@{DIGEST}",
     Reference("git", "git://127.0.0.1:9418/claims.git", None, DIGEST)),
    ("hf://acme/claims@1.2", Reference("hf", "acme/claims", "1.2")),
])
def test_each_form_parses_and_prints_back(text: str, expected: Reference) -> None:
    reference = parse(text)
    assert reference == expected and str(reference) == text
    assert reference.tag == (DIGEST.replace(":", "-") if expected.digest else expected.version)


@pytest.mark.parametrize("text", [
    "claims:1.2", "oci://ghcr.io/Acme/claims:1.2", "oci://ghcr.io:1.2", "oci://user:pw@ghcr.io/acme/claims:1",
    "git+https://user:token@github.com/acme/claims.git@1", "git+https://github.com/acme/claims.git@../x",
    "git+ftp://host/claims.git@1", "hf://claims@1", "hf://acme/claims@sha256:12", "oci://ghcr.io/acme/c:1 2",
    "oci://ghcr.io/acme/claims:sha256-" + "ab" * 32, "hf://acme/claims@" + "v" * 200, "oci://ghcr.io/acme/c:\udc80",
])
def test_malformed_references_and_credentials_are_refused_naming_the_flag(text: str) -> None:
    with pytest.raises(ConfigError, match="--worlds"):
        parse(text)


def test_a_reference_without_version_is_for_listing_only() -> None:
    assert parse("oci://ghcr.io/acme/claims", pinned=False) == Reference("oci", "ghcr.io/acme/claims")
    with pytest.raises(ConfigError, match="no version or digest"):
        parse("oci://ghcr.io/acme/claims")
    assert str(parse("hf://acme/claims@1").at(DIGEST)) == f"hf://acme/claims@{DIGEST}"
