#!/usr/bin/env node
// @ts-check
/**
 * Post traces to a `judge serve` service and gate CI on the answer. Node 20+, no dependencies.
 *
 *   node grade.mjs SCENARIO.yaml TRACE.jsonl [TRACE.jsonl ...]
 *        [--url http://127.0.0.1:8321] [--judge none|NAME] [--floor 1.0] [--json REPORT.json]
 *
 * Environment: JUDGE_URL (default http://127.0.0.1:8321), JUDGE_API_TOKEN (sent as a bearer token).
 * Exit codes, as `judge grade`: 0 every run passed; 1 a veto or a failing run; 2 bad input, a refused
 * request or no service; 3 no run failed but one is inconclusive (a key only a judge could decide got
 * no verdict, or a safety-critical key was flagged); 4 an internal error of the service.
 *
 * The scenario and traces are sent as file text with their names, so an error names the file, line
 * and field exactly as the CLI would.
 */
import { readFile, writeFile } from "node:fs/promises";
import process from "node:process";

/**
 * @typedef {{turn: number, key: string, event: string, class: string, sensitivity: string, rule?: string | null}} Divergence
 * @typedef {{turn: number | null, key: string, event: string | null, class: string, rule?: string | null,
 *            keys?: string[]}} Veto
 * @typedef {{run_id: string, scenario: string, trace: string | null, passed: boolean,
 *            outcome?: "pass" | "fail" | "inconclusive", outcome_reasons?: string[],
 *            eligible_for_release: boolean, quality_score: number | null,
 *            first_divergence: Divergence | null, veto?: Veto | null, slice: string[], warnings: string[]}} RunReport
 * @typedef {{judge: Record<string, unknown> | null, floor: number, runs: RunReport[]}} GradeReport
 * @typedef {{url: string, judge: string | undefined, floor: number | undefined, json: string | undefined,
 *            scenario: string, traces: string[]}} Options
 */

const USAGE = "usage: node grade.mjs SCENARIO TRACE [TRACE ...] [--url URL] [--judge none|NAME] " +
  "[--floor X] [--json PATH]";

/** @param {string} message @param {number} [code] @returns {never} */
function fail(message, code = 2) {
  process.stderr.write(`error: ${message}\n`);
  process.exit(code);
}

/**
 * The exit code of several runs when the service sent none: 1 if any failed, else 3 if any was
 * inconclusive, else 0.
 * @param {RunReport[]} runs
 */
function combine(runs) {
  const outcomes = runs.map((run) => run.outcome ?? (run.passed ? "pass" : "fail"));
  if (outcomes.includes("fail")) return 1;
  return outcomes.includes("inconclusive") ? 3 : 0;
}

/** @param {string[]} argv @returns {Options} */
function parseArgs(argv) {
  /** @type {Options} */
  const options = { url: process.env.JUDGE_URL || "http://127.0.0.1:8321", judge: undefined,
                    floor: undefined, json: undefined, scenario: "", traces: [] };
  const files = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => (i + 1 < argv.length ? argv[++i] : fail(`${arg} needs a value\n${USAGE}`));
    if (arg === "--url") options.url = value();
    else if (arg === "--judge") options.judge = value();
    else if (arg === "--floor") {
      const floor = Number(value());
      if (!(floor >= 0 && floor <= 1)) fail("--floor must be a number between 0 and 1");
      options.floor = floor;
    } else if (arg === "--json") options.json = value();
    else if (arg === "-h" || arg === "--help") { process.stdout.write(`${USAGE}\n`); process.exit(0); }
    else if (arg.startsWith("--")) fail(`unknown option ${arg}\n${USAGE}`);
    else files.push(arg);
  }
  if (files.length < 2) fail(USAGE);
  [options.scenario, ...options.traces] = files;
  return options;
}

/** @param {string} path */
async function text(path) {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    return fail(`${path}: cannot read: ${/** @type {Error} */ (error).message}`);
  }
}

/**
 * @param {Options} options
 * @returns {Promise<{report: GradeReport, raw: string, exitCode: number}>} the report, its JSON text
 *   (byte for byte what `judge grade --json` writes) and the CLI's exit code
 */
async function grade(options) {
  const body = {
    scenario: await text(options.scenario),
    scenario_name: options.scenario,
    traces: await Promise.all(options.traces.map(text)),
    trace_names: options.traces,
    ...(options.judge !== undefined && { judge: options.judge }),
    ...(options.floor !== undefined && { floor: options.floor }),
  };
  /** @type {Record<string, string>} */
  const headers = { "content-type": "application/json" };
  if (process.env.JUDGE_API_TOKEN) headers.authorization = `Bearer ${process.env.JUDGE_API_TOKEN}`;
  let response;
  try {
    response = await fetch(new URL("/v1/grade", options.url), { method: "POST", headers, body: JSON.stringify(body) });
  } catch (error) {
    const cause = /** @type {{cause?: {code?: string, message?: string, errors?: {code?: string}[]}}} */ (error).cause;
    const code = cause?.code ?? cause?.errors?.[0]?.code ?? cause?.message ?? String(error);
    return fail(`no judge service at ${options.url} (${code}); start one with \`judge serve\``);
  }
  const raw = await response.text();
  /** @type {any} */
  let payload = {};
  try {
    payload = JSON.parse(raw);
  } catch {
    payload = { detail: raw.slice(0, 300) };
  }
  const header = response.headers.get("x-judge-exit-code");
  if (!response.ok) {
    const detail = typeof payload.detail === "string" ? payload.detail : JSON.stringify(payload);
    // The service says what the CLI would exit with: 2 for bad input or configuration, 4 for its own bug.
    return fail(`${response.status}: ${detail}`, header !== null ? Number(header) : response.status >= 500 ? 4 : 2);
  }
  const report = /** @type {GradeReport} */ (payload);
  const exitCode = header !== null ? Number(header) : combine(report.runs);
  return { report, raw, exitCode };
}

/** @param {RunReport} run */
function status(run) {
  if (run.veto || (run.outcome === undefined && !run.eligible_for_release)) return "VETO";
  if (run.outcome === "inconclusive") return "INCONCLUSIVE";
  return run.passed ? "PASS" : "FAIL";
}

/** @param {RunReport} run */
function line(run) {
  const quality = run.quality_score === null ? "n/a" : run.quality_score.toFixed(4);
  const d = run.first_divergence;
  const where = d ? `  first divergence: turn ${d.turn}, key ${d.key} (${d.sensitivity}), event ${d.event}` : "";
  return `${status(run).padEnd(4)}  ${run.scenario} / ${run.run_id}  quality ${quality}${where}`;
}

const options = parseArgs(process.argv.slice(2));
const { report, raw, exitCode } = await grade(options);
for (const run of report.runs) {
  process.stdout.write(`${line(run)}\n`);
  const v = run.veto;
  if (v) {
    const keys = (v.keys && v.keys.length ? v.keys : [v.key]).join(", ");
    process.stdout.write(`      veto: ${keys} violated at ${v.event ?? "-"} (turn ${v.turn}, rule ${v.rule ?? "judge"})\n`);
  }
  if (run.outcome === "inconclusive") {
    for (const reason of run.outcome_reasons ?? []) process.stdout.write(`      inconclusive: ${reason}\n`);
  }
  for (const warning of run.warnings) process.stdout.write(`      warning: ${warning}\n`);
}
const passed = report.runs.filter((run) => run.passed).length;
const undecided = report.runs.filter((run) => run.outcome === "inconclusive").length;
process.stdout.write(`${passed}/${report.runs.length} runs passed${undecided ? `, ${undecided} inconclusive` : ""}\n`);
if (options.json) await writeFile(options.json, raw);
process.exit(exitCode);
