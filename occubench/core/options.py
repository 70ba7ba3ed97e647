"""A suite's own settings (:class:`SuiteOptions`): apart from :mod:`occubench.core.suite`, which sandbox workers
import, so that they load neither pydantic nor the run's configuration."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel, ConfigDict

from occubench.config import validated

if TYPE_CHECKING:
    from occubench.config import RunConfig

_O = TypeVar("_O", bound="SuiteOptions")


class SuiteOptions(BaseModel):
    """Settings only one suite reads (its data, its worlds, its days), declared by the suite's plugin as the fields
    of a subclass and checked when it plans a run. They are given like any other setting — a flag, a TOML key, a
    :class:`RunConfig` keyword — and kept in ``RunConfig.suite_options``; one that is not the suite's (another
    suite's) is refused when the run starts (:meth:`occubench.core.suite.SuiteDefinition.refuse_unread`)."""

    model_config = ConfigDict(extra="ignore", strict=True, frozen=True, allow_inf_nan=False)

    @classmethod
    def of(cls: type[_O], config: RunConfig) -> _O:
        """The suite's options in ``config``; a bad one raises :class:`ConfigError` naming its flag."""
        return validated(cls, config.suite_options)
