"""The HTML report's charts: one bar per call, in inline SVG, with both axes drawn and labelled — the values
up the side on a rounded scale, the calls along the bottom — and each bar's value written on it while there
is room (its hover text always has it). A call with no figure (an unpriced one) is drawn as what it is, not
as a bar of 0; a chart with nothing but zeros is a sentence that says so, not an empty box. Every element
carries `data-*` attributes with its figures, so tests (and people) can read them from the DOM.
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

WIDTH, HEIGHT = 760, 240
LEFT, RIGHT, BOTTOM = 78, 12, 40  # room for the value scale on the left, the calls and the axis title below
TOP_LABELLED, TOP_PLAIN = 56, 14  # above the plot: room for values written upright on the bars, or none
LABELLED_UP_TO = 40  # bars that get their value written on them (more would not fit)
UPRIGHT_UP_TO = 12  # up to this many the values are written across; beyond, up the bar
X_LABELS = 12  # at most this many calls are numbered along the bottom
_AXIS, _GRID, _TEXT, _UNPRICED = "#9aa5b1", "#eef1f5", "#4a5568", "#f1f3f6"


@dataclass(frozen=True, slots=True)
class Segment:
    kind: str  # what it measures: "cost", "input", "cached", "output", "cache"
    amount: float
    colour: str


@dataclass(frozen=True, slots=True)
class Bar:
    call: int  # the call's index in the report
    segments: tuple[Segment, ...]  # bottom up; none: the call has no figure (unpriced)
    label: str  # the value in words: "$0.0054", "1,230", "40%", "unpriced"
    title: str  # the hover text

    @property
    def total(self) -> float:
        return sum(segment.amount for segment in self.segments)


@dataclass(frozen=True, slots=True)
class Scale:
    title: str  # what the values are: "USD per call"
    tick: Callable[[float, float], str]  # a tick's value in words, given the step between ticks
    top: float | None = None  # a fixed top (a ratio: 1); None: rounded up from the largest bar
    whole: bool = False  # counts: the steps are whole numbers


def chart(testid: str, bars: Sequence[Bar], scale: Scale, *, stacked: bool = False) -> str:
    """The SVG chart (`stacked`: each bar's segments as `rect.segment`, else one `rect.bar` a call)."""
    labelled = len(bars) <= LABELLED_UP_TO
    top_margin = TOP_LABELLED if labelled else TOP_PLAIN
    plot = HEIGHT - top_margin - BOTTOM
    step, top = _steps(max((bar.total for bar in bars), default=0.0), scale)
    slot = (WIDTH - LEFT - RIGHT) / max(len(bars), 1)
    width = max(slot * 0.8, 0.5)
    base = HEIGHT - BOTTOM
    parts = [
        f'<svg data-testid="{testid}" data-count="{len(bars)}" viewBox="0 0 {WIDTH} {HEIGHT}" width="100%" '
        f'role="img" xmlns="http://www.w3.org/2000/svg">',
        _value_axis(scale, step, top, top_margin, plot),
    ]
    for offset, bar in enumerate(bars):
        x = LEFT + offset * slot
        title = f"<title>{escape(bar.title)}</title>"
        if not bar.segments:  # no figure: a pale outlined column the height of the plot, never a bar of 0
            parts.append(
                f'<rect class="bar unpriced" data-call="{bar.call}" x="{x:.2f}" y="{top_margin}" width="{width:.2f}" '
                f'height="{plot}" fill="{_UNPRICED}" stroke="{_AXIS}" stroke-dasharray="3 2">{title}</rect>'
            )
        y = float(base)
        for segment in bar.segments:
            height = plot * segment.amount / top
            y -= height
            what = (
                f'class="segment" data-call="{bar.call}" data-kind="{segment.kind}" data-tokens="{segment.amount:.0f}"'
                if stacked
                else f'class="bar" data-call="{bar.call}" data-value="{segment.amount:.10g}"'
            )
            parts.append(
                f'<rect {what} x="{x:.2f}" y="{y:.2f}" width="{width:.2f}" height="{height:.2f}" '
                f'fill="{segment.colour}">{title}</rect>'
            )
        if labelled:
            parts.append(_value_label(bar, x + width / 2, y if bar.segments else float(top_margin), len(bars)))
    parts.append(_call_axis(len(bars), slot, width))
    parts.append(
        f'<text class="axis-title" x="{LEFT + (WIDTH - LEFT - RIGHT) / 2:.0f}" y="{HEIGHT - 4}" '
        f'text-anchor="middle">call</text>'
        f'<text class="axis-title" transform="rotate(-90)" x="{-(top_margin + plot / 2):.0f}" y="14" '
        f'text-anchor="middle">{escape(scale.title)}</text>'
    )
    return "".join(parts) + "</svg>"


def nothing_to_draw(testid: str, count: int, words: str) -> str:
    """What stands in place of a chart whose every value is 0: the fact, in words."""
    return f'<p class="empty-chart" data-testid="{testid}" data-count="{count}">{escape(words)}</p>'


def money_tick(value: float, step: float) -> str:
    """A dollar amount with the places its step needs: "$0", "$0.0025", "$0.50", "$12.00"."""
    if value == 0:
        return "$0"
    places = max(2, -math.floor(math.log10(step))) if step > 0 else 2
    return f"${value:,.{places}f}"


def count_tick(value: float, step: float) -> str:
    del step
    return f"{value:,.0f}"


def percent_tick(value: float, step: float) -> str:
    del step
    return f"{value * 100:.0f}%"


def _steps(largest: float, scale: Scale) -> tuple[float, float]:
    """The step between ticks and the top of the scale: four steps of 1, 2 or 5 × 10ⁿ that reach the largest."""
    if scale.top is not None:
        return scale.top / 4, scale.top
    if largest <= 0:
        return (1.0, 4.0) if scale.whole else (0.25, 1.0)
    rough = largest / 4
    power = 10 ** math.floor(math.log10(rough))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= rough * (1 - 1e-9))
    if scale.whole:
        step = max(1.0, math.ceil(step))
    return step, step * math.ceil(largest / step - 1e-9)


def _value_axis(scale: Scale, step: float, top: float, top_margin: int, plot: int) -> str:
    """The scale up the left side: a labelled tick and a grid line at each step, the line at 0 darker."""
    ticks = [step * n for n in range(round(top / step) + 1)]
    parts = ['<g class="axis-y">']
    for value in ticks:
        y = HEIGHT - BOTTOM - plot * value / top
        colour = _AXIS if value == 0 else _GRID
        parts.append(
            f'<line x1="{LEFT - 4}" y1="{y:.2f}" x2="{WIDTH - RIGHT}" y2="{y:.2f}" stroke="{colour}"/>'
            f'<text data-value="{value:.10g}" x="{LEFT - 7}" y="{y + 4:.2f}" text-anchor="end">'
            f"{escape(scale.tick(value, step))}</text>"
        )
    return "".join(parts) + "</g>"


def _call_axis(count: int, slot: float, width: float) -> str:
    """The calls along the bottom: the first, the last, and a round step between (at most X_LABELS)."""
    if not count:
        return '<g class="axis-x"></g>'
    step = next(m * 10**p for p in range(8) for m in (1, 2, 5) if count / (m * 10**p) <= X_LABELS)
    numbered = [n for n in range(step, count, step) if n > 1 and count - n >= step / 2]
    parts = ['<g class="axis-x">']
    for call in [1, *numbered, count] if count > 1 else [1]:
        x = LEFT + (call - 1) * slot + width / 2
        parts.append(
            f'<text data-value="{call}" x="{x:.2f}" y="{HEIGHT - BOTTOM + 14}" text-anchor="middle">{call}</text>'
        )
    return "".join(parts) + "</g>"


def _value_label(bar: Bar, x: float, y: float, count: int) -> str:
    """The bar's value written just above it: across when there are few bars, else upright."""
    if count <= UPRIGHT_UP_TO:
        placed = f'x="{x:.2f}" y="{y - 4:.2f}" text-anchor="middle"'
    else:
        placed = f'transform="translate({x + 3.5:.2f},{y - 4:.2f}) rotate(-90)" text-anchor="start"'
    return f'<text class="value" data-call="{bar.call}" fill="{_TEXT}" {placed}>{escape(bar.label)}</text>'
