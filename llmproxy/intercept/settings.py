"""What the intercept stage is set up with: the chaos, quotas and budget a run's options or a test's marker
make, where their counters live, and whether the runtime control API may change them. It sits in the
intercept package, below the plan that carries it, so the options that make it need no plan."""

from dataclasses import dataclass, field
from typing import Final

from llmproxy.intercept.rules import ChaosFile


@dataclass(frozen=True, slots=True)
class InterceptPlan:
    """Chaos, quotas and a budget (`--chaos`, `--fail`, `--rpm`, `--budget-usd`…), their counters' store
    (`--state`: None keeps them in this process), and the runtime control API. Always in the chain: with
    nothing configured it costs a look at each request's headers, and the control API can add chaos later —
    unless the chaos is `fixed` (the pytest plugin's: each test's is its marker's)."""

    chaos: ChaosFile = field(default_factory=ChaosFile)
    state: str | None = None
    control: bool = True
    source: str = ""  # where the chaos came from, for --explain-chain
    fixed: str = ""  # why the control API may show the chaos but not change it ("": it may change it)

    @property
    def configured(self) -> bool:
        return bool(self.chaos.rules) or self.chaos.budgetUsd is not None


NO_INTERCEPT: Final = InterceptPlan()
