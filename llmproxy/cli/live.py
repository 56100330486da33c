"""`--live`: the calls as they happen, in a table on stderr, ending with the summary in a panel.

Shown by default when stderr is a terminal and no `-- CMD` owns it (`record`, `replay` or `mock` serving
until Ctrl-C); `--live` asks for it with a command too (then the command's output is passed through above
the table), `--no-live` never. When stderr is not a terminal nothing changes: the summary lines as always.
"""

import threading
from decimal import Decimal

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from llmproxy.analysis.figures import dollars
from llmproxy.meter import Answered, Call, totals
from llmproxy.words import plural

_STYLE = {
    Answered.HIT: "green",
    Answered.MOCK: "cyan",
    Answered.UPSTREAM: "blue",
    Answered.INJECTED: "magenta",
    Answered.MISS: "bold red",
    Answered.ERROR: "bold red",
}
COLUMNS = ("#", "provider", "model", "status", "answer", "in", "out", "cached", "cost so far", "latency", "TTFT")


class LiveView:
    """The table, redrawn as each call ends (`add` may be called from any thread), the latest calls that fit
    the terminal shown. `close(summary)` leaves the table and prints the summary as a panel."""

    def __init__(self, console: Console, title: str) -> None:
        self.console = console
        self.title = title
        self._calls: list[Call] = []
        self._lock = threading.Lock()
        self._live = Live(self._render(), console=console, auto_refresh=False, transient=False)

    def __enter__(self) -> "LiveView":
        self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._live.stop()

    def add(self, call: Call) -> None:
        with self._lock:
            self._calls.append(call)
            self._live.update(self._render(), refresh=True)

    def say(self, text: str) -> None:
        """A line above the table: the command's output, a warning."""
        self._live.console.print(Text.from_ansi(text.rstrip("\n")), soft_wrap=True, highlight=False, markup=False)

    def close(self, summary: str, failed: bool) -> None:
        self._live.stop()
        self.console.print(summary_panel(self.title, summary, self._calls, failed))

    def _render(self) -> RenderableType:
        room = max(3, self.console.size.height - 8)
        return calls_table(self._calls, room)


def calls_table(calls: list[Call], room: int = 1_000_000) -> Table:
    """The calls as rows, the latest `room` of them, with the running cost."""
    table = Table(title=f"{plural(len(calls), 'call')}", title_justify="left", expand=False)
    for name in COLUMNS:
        table.add_column(name, justify="left" if name in ("provider", "model", "answer") else "right")
    running, unpriced = Decimal(0), 0
    rows = []
    for call in calls:
        running += call.cost_usd or 0
        unpriced += call.unpriced is not None
        rows.append(_row(call, running, unpriced))
    if len(rows) > room:
        table.add_row("…", f"{len(rows) - room + 1} earlier", *[""] * (len(COLUMNS) - 2))
        rows = rows[len(rows) - room + 1 :]
    for row in rows:
        table.add_row(*row)
    return table


def summary_panel(title: str, summary: str, calls: list[Call], failed: bool) -> Panel:
    total = totals(calls)
    answered = ", ".join(f"{count} {answer.value}" for answer, count in total.by_answer.items() if count)
    tokens = total.tokens
    figures = (
        f"{plural(total.calls, 'call')}{f' ({answered})' if answered else ''} · {tokens.input:,} in "
        f"({tokens.cache_read:,} cached) / {tokens.output:,} out tokens · {dollars(total.cost_usd)}"
        + (f" + {len(total.unpriced)} unpriced" if total.unpriced else "")
    )
    body = Group(Text(figures, style="bold"), Text(summary)) if summary else Text(figures, style="bold")
    return Panel(body, title=title, title_align="left", border_style="red" if failed else "green", expand=False)


def _row(call: Call, running: Decimal, unpriced: int) -> tuple[str | Text, ...]:
    usage = call.usage
    tokens = (
        (f"{usage.input_tokens:,}", f"{usage.output_tokens:,}", f"{usage.cache_read_tokens:,}")
        if usage is not None
        else ("", "", "")
    )
    cost = dollars(running) + (f" +{unpriced}?" if unpriced else "")
    return (
        str(call.seq),
        call.provider.value if call.provider is not None else call.host,
        call.model or "",
        str(call.status) if call.status is not None else "—",
        Text(call.answered.value, style=_STYLE[call.answered]),
        *tokens,
        cost,
        _ms(call.latency_ms),
        _ms(call.ttft_ms),
    )


def _ms(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value / 1000:.1f} s" if value >= 1000 else f"{value:.0f} ms"
