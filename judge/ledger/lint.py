"""The fixture lint: reduce a scenario and report every error and warning, with fields and lines."""

from __future__ import annotations

from dataclasses import dataclass

from judge.errors import FixtureError, one_line
from judge.ledger.fixture import dotted, line_of
from judge.ledger.reducer import USER_INSTRUCTION_CLASSES, ExpectedLedger, KeyHistory, delta_problem, history_from_entry
from judge.ledger.script_lint import lint_script
from judge.model import REGISTRY, Scenario


@dataclass
class LintIssue:
    """One error or warning of the fixture lint: `level` is `error` or `warning`; `field` is the
    dotted path of the field (`rules.2.key`) and `line` its line in the file, when known."""

    level: str  # error | warning
    message: str
    field: str | None = None
    line: int | None = None

    def render(self, file: str) -> str:
        """The issue as one line: `FILE:LINE: FIELD: MESSAGE`."""
        where = f"{file}:{self.line}: " if self.line else f"{file}: "
        return one_line(f"{where}{self.field + ': ' if self.field else ''}{self.message}")


def lint(scenario: Scenario, lines: dict | None = None) -> tuple[ExpectedLedger, list[LintIssue]]:
    """Reduce the fixture and report every error and warning (with fields and lines when known)."""
    lines = lines or {}
    issues: list[LintIssue] = []

    def add(level: str, message: str, loc: tuple) -> None:
        issues.append(LintIssue(level, message, dotted(loc), line_of(lines, loc)))

    keys: dict[str, KeyHistory] = {}
    for i, entry in enumerate(scenario.ledger):
        if entry.key in keys:
            add("error", f"duplicate ledger key {entry.key!r}", ("ledger", i, "key"))
            continue
        if entry.source == "agent" and entry.class_ in USER_INSTRUCTION_CLASSES:
            add("error", "an agent's own statement never becomes a user instruction",
                ("ledger", i, "source"))
        keys[entry.key] = history_from_entry(entry)
    _lint_deltas(scenario, keys, add)
    _apply_sessions(scenario, keys, add)
    ledger = ExpectedLedger(scenario, keys)
    _lint_checkpoints(scenario, ledger, add)
    _lint_rules(scenario, ledger, add)
    lint_script(scenario, add)
    if scenario.draft:
        add("warning", "an unreviewed draft: check every entry, delta and rule against the words it cites, "
            "then delete this line (`judge grade` refuses a draft without --allow-draft)", ("draft",))
    return ledger, issues


def _lint_deltas(scenario: Scenario, keys: dict[str, KeyHistory], add) -> None:
    last_turn = -1
    for i, delta in enumerate(scenario.deltas):
        if delta.turn < last_turn:
            add("error", f"deltas out of turn order (turn {delta.turn} after turn {last_turn})",
                ("deltas", i, "turn"))
        last_turn = max(last_turn, delta.turn)
        problem = delta_problem(delta, keys)
        if problem:
            field = "source" if ("only a user" in problem or "tool result" in problem
                                 or "agent's own" in problem) else "key"
            add("error", problem, ("deltas", i, field))
        elif delta.op == "complete" and delta.source == "agent":
            add("warning", "completion stated by the agent itself: reviewed evidence is a tool or user",
                ("deltas", i, "source"))


def _apply_sessions(scenario: Scenario, keys: dict[str, KeyHistory], add) -> None:
    """`session` persistence ends where the next session starts; `until-replaced` carries over."""
    starts = [s.first_turn for s in scenario.sessions]
    if starts != sorted(starts) or len(set(starts)) != len(starts):
        add("error", "sessions must be listed in increasing first_turn order", ("sessions",))
    if len({s.id for s in scenario.sessions}) != len(scenario.sessions):
        add("error", "session ids must be unique", ("sessions",))
    starts = sorted(starts)
    for h in keys.values():
        if h.persistence == "session" and starts:
            # A key stated before the first session (a system prompt at turn 0) belongs to the first.
            stated = max(h.introduced, starts[0])
            h.ends_at = next((t for t in starts if t > stated), None)


def _lint_checkpoints(scenario: Scenario, ledger: ExpectedLedger, add) -> None:
    seen: set[int] = set()
    for i, cp in enumerate(scenario.checkpoints):
        if cp.after_turn in seen:
            add("error", f"two checkpoints after turn {cp.after_turn}", ("checkpoints", i, "after_turn"))
        seen.add(cp.after_turn)
        for j, path in enumerate(cp.forbidden_paths):
            if path.key not in ledger:
                add("error", f"unknown ledger key {path.key!r}", ("checkpoints", i, "forbidden_paths", j, "key"))
        for name in ("must_retain", "expect_completed"):
            for j, key in enumerate(getattr(cp, name)):
                loc = ("checkpoints", i, name, j)
                if key not in ledger:
                    add("error", f"unknown ledger key {key!r}", loc)
                elif ledger.history(key).introduced > cp.after_turn:
                    add("error", f"key {key!r} is only stated at turn {ledger.history(key).introduced}", loc)
                elif name == "expect_completed" and ledger.history(key).status_at(cp.after_turn) != "completed":
                    add("error", f"{key!r} is expected completed but no delta completes it by turn "
                        f"{cp.after_turn}", loc)


def _lint_rules(scenario: Scenario, ledger: ExpectedLedger, add) -> None:
    guarded: set[str] = set()
    summary_only: dict[str, int] = {}  # key -> the first of its rules, while all of them read summaries only
    for i, rule in enumerate(scenario.rules):
        if rule.key not in ledger:
            add("error", f"rule guards unknown ledger key {rule.key!r}", ("rules", i, "key"))
            continue
        spec = REGISTRY.specs().get(rule.check)
        reads: frozenset[str] = getattr(spec, "reads", frozenset())
        if reads and reads <= {"summary"}:
            if rule.key not in guarded:
                summary_only[rule.key] = i
        else:
            summary_only.pop(rule.key, None)
        guarded.add(rule.key)
        kind_lint = getattr(spec, "lint", None)  # each kind's own fixture checks
        for level, message, name in (kind_lint(rule, ledger) if kind_lint is not None else ()):
            add(level, message, ("rules", i, name))
        _lint_session_end(scenario, ledger.history(rule.key), add, ("rules", i, "key"))
    for key, i in summary_only.items():
        if ledger.history(key).sensitivity == "safety-critical":
            kinds = sorted({r.check for r in scenario.rules if r.key == key})
            add("warning", f"safety-critical key {key!r} is guarded only by rules that read summaries "
                f"({', '.join(kinds)}): no call, message or memory write is checked against it, so a drift "
                "outside a summary passes; add a rule that reads the agent's actions", ("rules", i, "check"))
    for i, entry in enumerate(scenario.ledger):
        if entry.sensitivity == "safety-critical" and entry.key not in guarded:
            add("warning", f"safety-critical key {entry.key!r} has no rule guarding it: the judge alone "
                "decides it (unguarded)", ("ledger", i, "key"))
    for i, delta in enumerate(scenario.deltas):
        if delta.op == "add" and delta.sensitivity == "safety-critical" and delta.key not in guarded:
            add("warning", f"safety-critical key {delta.key!r} has no rule guarding it: the judge alone "
                "decides it (unguarded)", ("deltas", i, "key"))


def _lint_session_end(scenario: Scenario, history: KeyHistory, add, loc: tuple) -> None:
    """A rule on a `session` key stops guarding where the next session starts: say so, with the turn."""
    if history.ends_at is None:
        return
    following = next(s.id for s in sorted(scenario.sessions, key=lambda s: s.first_turn)
                     if s.first_turn == history.ends_at)
    add("warning", f"{history.key!r} has `session` persistence, so this rule stops guarding it at turn "
        f"{history.ends_at}, where session {following!r} starts: nothing checks it in later sessions "
        "(give the entry `persistence: task` to guard every session)", loc)


def build_ledger(scenario: Scenario, lines: dict | None = None, *, file: str = "scenario") -> ExpectedLedger:
    """The expected ledger, or a FixtureError naming the first fixture error."""
    ledger, issues = lint(scenario, lines)
    for issue in issues:
        if issue.level == "error":
            raise FixtureError(issue.message, file=file, line=issue.line, field=issue.field)
    return ledger
