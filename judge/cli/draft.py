"""`judge draft`: propose a scenario from traces, for a test author to review (judge.draft).

Exit codes: 0 the draft was written; 2 bad input (a trace, `--tools`, a policy document, a judge
configuration, an output that exists or is an input), one line on stderr, no traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from judge.cli.common import console, err, offline_env, refuse_overwriting_inputs, user_errors, write_output
from judge.errors import UsageError


@user_errors
def draft_cmd(
    traces: list[Path] | None = typer.Argument(None, help="JSONL traces of runs of one scenario: the first gives "
                                                  "what the user said and what tools returned; all of them give the "
                                                  "tools (with --policy-doc: only the tools)."),
    out: Path = typer.Option(..., "-o", "--out", help="Where to write the drafted scenario (YAML); `-` prints it."),
    scenario_id: str | None = typer.Option(None, "--id", help="The scenario id (default: `<scenario>-draft`, "
                                              "the one the first trace's run header names with `-draft`, so a "
                                              "draft never takes a reviewed scenario's id; it grades that "
                                              "scenario's traces)."),
    tools: Path | None = typer.Option(None, "--tools", help="OpenAI function schemas (JSON) of the agent's "
                                         "tools, so a forbidden action can name a tool no trace called."),
    judge: str | None = typer.Option(None, "--judge", help="An llm judge of [tool.judge.judges]: its model "
                                        "proposes entries, deltas and rules too (prompt ledger-draft@1), merged "
                                        "with the offline draft and marked [model]. Default: offline only."),
    config: Path | None = typer.Option(None, "--config", help="A TOML file holding a [tool.judge] table."),
    force: bool = typer.Option(False, "--force", help="Replace OUT if it exists."),
    policy_doc: Path | None = typer.Option(None, "--policy-doc", help="A written policy (Markdown or text, such as "
                                              "an agent's system prompt): draft a policy from it, every rule citing "
                                              "its sentence (entries from turn 0, no checkpoints); TRACEs and --tools "
                                              "give the tools."),
) -> None:
    """Draft a scenario from what the user said and what tools returned (a trace with no user
    message: from its first task statement), or a policy from a written policy (--policy-doc);
    every entry, delta and rule names the event or sentence it came from. Review it, then delete
    its `draft: true` line."""
    from judge.draft import draft_policy, draft_scenario

    traces = list(traces or [])
    inputs = [*traces, tools, config, policy_doc]
    to_stdout = str(out) == "-"
    refuse_overwriting_inputs([] if to_stdout else [out], inputs)
    if not to_stdout and out.exists() and not force:
        raise UsageError("exists: a draft never replaces a file (it may be a reviewed scenario); give --force "
                         "or another -o", file=str(out))
    if policy_doc is not None and judge is not None:
        raise UsageError("--judge drafts from traces, not from a policy document: leave out one of --judge and "
                         "--policy-doc")
    if policy_doc is None and not traces:
        raise UsageError("give a TRACE to draft from (or --policy-doc FILE)")
    assistant = None
    if judge is not None:
        offline_env()
        from judge.draft import make_assistant

        assistant = make_assistant(judge, config_file=config)
    if policy_doc is not None:
        result = draft_policy(policy_doc, traces=traces, tools=tools, policy_id=scenario_id)
    else:
        result = draft_scenario(traces, scenario_id=scenario_id, tools=tools, assistant=assistant)
    if to_stdout:
        sys.stdout.write(result.text)
    else:
        write_output(out, result.text, inputs)
    draft = result.draft
    added = sum(1 for e in draft.entries if e.turn > draft.first_turn)
    screen = err if to_stdout else console(soft_wrap=True)
    out_name = "stdout" if to_stdout else str(out)
    if policy_doc is not None:
        ruled = len({r.key for r in draft.rules})
        screen.print(f"drafted policy {draft.scenario_id}: {len(draft.entries)} entries from {policy_doc}, "
                     f"{len(draft.rules)} rules guarding {ruled} of them -> {out_name}", markup=False)
    else:
        screen.print(f"drafted {draft.scenario_id}: {len(draft.entries)} entries ({added} of them `add` deltas), "
                     f"{len(draft.deltas)} set/revoke/complete deltas, {len(draft.rules)} rules, "
                     f"{len(draft.checkpoints)} checkpoints -> {out_name}", markup=False)
    if result.assist is not None:
        usage = result.assist["usage"]
        state = f"failed ({result.assist['error']}), the draft is offline only" if result.assist["error"] else \
            f"{usage.get('calls', 0)} call(s), {usage.get('cache_hits', 0)} cache hit(s)"
        origins = {o: sum(e.origin == o for e in draft.entries) + sum(d.origin == o for d in draft.deltas)
                   + sum(r.origin == o for r in draft.rules) for o in ("offline", "model", "offline+model")}
        screen.print(f"model layer: {state}; items offline {origins['offline']}, model {origins['model']}, "
                     f"both {origins['offline+model']}", markup=False)
    for warning in result.warnings:
        screen.print(f"warning: {warning}", markup=False)
    screen.print(f"review it: `judge lint {'FILE' if to_stdout else out}` lists what to check; then delete its "
                 f"`draft: true` line "
                 f"(`judge grade --allow-draft` grades it before that)", markup=False)


def register(app: typer.Typer) -> None:
    """Add `draft` to the `judge` typer app."""
    app.command("draft")(draft_cmd)
