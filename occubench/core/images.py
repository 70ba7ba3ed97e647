"""Images in observations: how a tool returns one, how it travels, and how it reaches an agent.

A tool returns an :class:`Image` (as its whole result, or anywhere inside it). The environment writes it as the
reserved shape ``{"$image": {"media_type", "bytes", "sha256", "text", "data"}}`` (``data`` in base64), so it
crosses a sandbox worker's pipe as JSON; an image that is not PNG, JPEG, WebP or GIF by its first bytes, or larger
than :data:`MAX_IMAGE_BYTES`, travels without ``data`` and with a ``note`` saying why.

Before an agent sees an observation, :func:`deliver` takes the images out: an agent whose model takes image input
gets each valid one as image content beside the observation, any other its ``text`` (what the image shows, in words
and numbers) in its place. Either way the observation that is recorded and shown holds no image data, only how the
image was delivered::

    {"$image": {"delivered_as": "image", "media_type": "image/png", "bytes": 93986, "sha256": "…"}}
    {"$image": {"delivered_as": "text", "media_type": "image/png", "bytes": 93986, "sha256": "…",
                "text": "A heatmap: density peaks at 41 in the north-east.", "note": "…only when refused"}}
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from occubench.util.jsonsafe import MAX_DEPTH, MAX_STRING

#: The reserved key of an image in an observation.
KEY = "$image"
#: The largest image delivered as one: its base64 is one JSON string that every hop keeps whole.
MAX_IMAGE_BYTES = MAX_STRING // 4 * 3
#: The image types agents take, by the bytes their files start with (WebP's start ``RIFF<size>WEBP``).
_MAGIC = {"image/png": re.compile(rb"\x89PNG\r\n\x1a\n"), "image/jpeg": re.compile(rb"\xff\xd8\xff"),
          "image/gif": re.compile(rb"GIF8[79]a"), "image/webp": re.compile(rb"RIFF.{4}WEBP", re.DOTALL)}
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Image:
    """An image a tool returns: its media type (``image/png``, ``image/jpeg``, ``image/webp`` or ``image/gif``),
    its bytes, and ``text``, what it shows in words and numbers, which an agent that takes no images gets instead."""

    media_type: str
    data: bytes = field(repr=False)
    text: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    def encoded(self) -> str:
        """The bytes in base64."""
        return base64.b64encode(self.data).decode("ascii")

    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{self.encoded()}"

    def to_json(self) -> dict[str, Any]:
        """The reserved shape the environment writes in the observation (see the module docstring)."""
        facts: dict[str, Any] = {"media_type": str(self.media_type), "bytes": len(self.data), "sha256": self.sha256,
                                 "text": str(self.text)}
        problem = image_problem(self.media_type, self.data)
        if problem is not None:
            return {KEY: {**facts, "note": problem}}
        return {KEY: {**facts, "data": self.encoded()}}


def image_problem(media_type: object, data: bytes) -> str | None:
    """Why ``data`` is not delivered as an image of ``media_type``, or None."""
    magic = _MAGIC.get(media_type) if isinstance(media_type, str) else None
    if magic is None:
        return f"{str(media_type)[:100]!r} is not an image type agents take (image/png, image/jpeg, image/webp, " \
               "image/gif)"
    if len(data) > MAX_IMAGE_BYTES:
        return f"the image is {len(data):,} bytes, over the limit of {MAX_IMAGE_BYTES:,}"
    if not magic.match(data):
        return f"the bytes are not of type {media_type} (they do not start as such a file does)"
    return None


def json_default(value: Any) -> Any:
    """What :func:`occubench.util.jsonsafe.json_safe` writes for a value that is not JSON: an image's reserved
    shape, anything else's text."""
    return value.to_json() if isinstance(value, Image) else str(value)


def deliver(observation: Any, as_image: bool) -> tuple[Any, list[Image]]:
    """``observation`` with each image in it replaced by the record of its delivery, and the images to send as
    image content: those valid when ``as_image`` (the agent's model takes images), else none. The observation comes
    from a world and is checked as such: an image whose data is not base64, not of its type or too large is
    delivered as its text, with a note saying why."""
    images: list[Image] = []
    return _delivered(observation, as_image, images, 0), images


def _delivered(value: Any, as_image: bool, images: list[Image], depth: int) -> Any:
    if depth > MAX_DEPTH:  # no image is deeper: json_safe cut it off
        return value
    if isinstance(value, dict):
        if len(value) == 1 and isinstance(entry := value.get(KEY), dict):
            return {KEY: _record(entry, as_image, images)}
        return {key: _delivered(item, as_image, images, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [_delivered(item, as_image, images, depth + 1) for item in value]
    return value


def _record(entry: dict[str, Any], as_image: bool, images: list[Image]) -> dict[str, Any]:
    media_type, text = entry.get("media_type"), entry.get("text")
    text = text if isinstance(text, str) else ""
    facts: dict[str, Any] = {"media_type": media_type if isinstance(media_type, str) else ""}
    image, data = None, entry.get("data")
    note: str | None = given if isinstance(given := entry.get("note"), str) else "the image has no data"
    if isinstance(data, str) and len(data) <= MAX_STRING:
        try:
            image = Image(facts["media_type"], base64.b64decode(data, validate=True), text)
        except (binascii.Error, ValueError):
            note = "the image data is not base64"
        else:
            facts.update(bytes=len(image.data), sha256=image.sha256)
            note = image_problem(image.media_type, image.data)
    elif isinstance(data, str):
        note = "the image data is larger than any image delivered"
    else:  # refused where it was made: its size and digest are the world's word
        if isinstance(size := entry.get("bytes"), int) and not isinstance(size, bool) and size >= 0:
            facts["bytes"] = size
        if isinstance(digest := entry.get("sha256"), str) and _SHA256.fullmatch(digest):
            facts["sha256"] = digest
    if as_image and image is not None and note is None:
        images.append(image)
        return {"delivered_as": "image", **facts}
    return {"delivered_as": "text", **facts, "text": text, **({"note": note} if note else {})}
