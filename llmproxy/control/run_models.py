"""The JSON of the run's own endpoints (`llmproxy.control.run_api`): load, save and stop."""

from typing import Final, Literal, Self

from pydantic import Field, model_validator

from llmproxy.control.models import ApiModel, ServedCassette
from llmproxy.journal import Source
from llmproxy.mock import spec

SAVED_BY_DEFAULT: Final = (Source.LIVE, Source.REPLAYED, Source.MOCKED)
"""What a save writes unless told: the answers a client got from the network, a cassette or an expectation —
not refusals, faults put in on purpose, background traffic or llmproxy's own failures."""


class Load(ApiModel):
    """An expectations file or a cassette on this machine (`path`), or expectations given inline (`inline`)."""

    path: str | None = Field(
        None,
        description="a file or folder on this machine (relative: to where llmproxy runs): an expectations file "
        "(what `llmproxy mock --expectations` reads), or a cassette or a folder of them (what `replay --cassette` "
        "reads)",
    )
    inline: spec.ExpectationsFile | None = Field(
        default=None, description="expectations, in the expectations file's JSON"
    )
    kind: Literal["expectations", "cassette"] | None = Field(
        None, description="what `path` is; default: a folder, or JSON without `expectations`, is a cassette"
    )
    test_id: str | None = Field(
        None, min_length=1, description="expectations that answer only requests sent with this x-llmproxy-test-id"
    )

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        if (self.path is None) == (self.inline is None):
            raise ValueError("give path or inline, one of them")
        if self.inline is not None and self.kind == "cassette":
            raise ValueError("inline takes expectations: load a cassette by its path")
        return self


class Loaded(ApiModel):
    kind: Literal["expectations", "cassette"]
    files: list[str] = Field(description="the files read")
    added: list[int] | None = Field(default=None, description="expectations: the ids the new entries were given")
    exchanges: int | None = Field(default=None, description="cassettes: the recorded exchanges they added")
    cassettes: list[ServedCassette] | None = Field(
        default=None, description="cassettes: every one the replay serves now"
    )


class Save(ApiModel):
    """Write the journal's exchanges to a cassette with the recorder's own writer and redactor."""

    path: str = Field(description="the cassette to write (relative: to where llmproxy runs)")
    sources: list[Source] = Field(
        default_factory=lambda: list(SAVED_BY_DEFAULT), description="only exchanges answered so"
    )
    test_id: str | None = Field(default=None, description="only requests sent with this x-llmproxy-test-id header")
    provider: str | None = Field(default=None, description="only this API: anthropic, openai, gemini, bedrock, …")
    model: str | None = Field(default=None, description="only requests for this model")
    since: int = Field(0, ge=0, description="only journal entries numbered after this one")
    overwrite: bool = Field(False, description="replace the file if it exists (otherwise that is refused, 409)")


class Saved(ApiModel):
    path: str
    exchanges: int = Field(description="exchanges written")
    journal: list[int] = Field(description="the sequence numbers of the journal entries written, in order")
    summary: str = Field(description="the recorder's line on what it wrote")


class Stopping(ApiModel):
    stopping: bool = Field(description="the run ends once this answer is sent")
    run: str = Field(description="what the run does, in words: what ends")
