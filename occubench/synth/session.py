"""One synthesis, as either track runs it: the models of its roles checked by one tiny request each, the output
folder locked, the engine storing answers under ``<out>/synthesis/stages``, and no secret in any error message."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from occubench.engine.summary import Price, load_prices
from occubench.errors import ConfigError
from occubench.llm.ledger import Ledger, open_ledger
from occubench.synth.config import SynthConfig
from occubench.synth.engine import Engine
from occubench.util.lock import DirectoryLock
from occubench.util.log import end_logging, setup_logging
from occubench.util.redact import Redactor

if TYPE_CHECKING:
    from occubench.llm import Model

#: The synthesis's own folder inside the output folder: stored answers, calibration runs, the report.
WORK_DIR = "synthesis"


@dataclass
class Session:
    config: SynthConfig
    console: Console
    #: Role → model; ``synth`` always.
    models: dict[str, Model]
    engine: Engine
    #: Every request of this synthesis made outside a calibration run, by role.
    ledger: Ledger
    prices: dict[str, Price] | None
    work: Path


@contextmanager
def open_session(config: SynthConfig, roles: dict[str, str], console: Console) -> Iterator[Session]:
    """A session for ``roles`` (role → model name; ``synth`` is added from the config)."""
    redactor = Redactor(config.secrets())
    with redactor.errors(), _open(config, roles, console, redactor) as session:
        yield session


@contextmanager
def _open(config: SynthConfig, roles: dict[str, str], console: Console, redactor: Redactor) -> Iterator[Session]:
    from occubench.engine.models import build_models, preflight  # the LLM layer loads only here

    if not config.synth_model:
        raise ConfigError("--synth-model is required: the model that writes every stage")
    if config.replay and not config.cache:
        raise ConfigError("--replay needs --cache PATH: the cache to replay from")
    out = Path(config.out)
    if out.is_file():
        raise ConfigError(f"--out: {out} is a file, not a folder")
    prices = load_prices(Path(config.prices)) if config.prices else None
    cache = None
    if config.cache:
        from occubench.llm import ResponseCache

        cache = ResponseCache(config.cache, replay=config.replay)
    try:
        roles = {"synth": config.synth_model, **roles}
        models = build_models(config, [config.model_role(role, name) for role, name in roles.items()], cache)
        if not (config.skip_preflight or config.replay):
            preflight(models, {role: config.endpoint(role) for role in models}, config.retry_budget, console)
        work = out / WORK_DIR
        with DirectoryLock(work, "synthesis") as lock, open_ledger() as ledger:
            if lock.taken_over:
                console.print(f"note: taking over {out} from process {lock.taken_over}, which ended without "
                              "releasing it")
            logging_to = setup_logging(work, debug=config.debug, redactor=redactor, tag_tasks=False)
            try:
                engine = Engine(models["synth"], work / "stages", redactor=redactor)
                yield Session(config, console, models, engine, ledger, prices, work)
            finally:
                end_logging(logging_to)  # what the process logs next is not this synthesis's
    finally:
        if cache:
            cache.close()
