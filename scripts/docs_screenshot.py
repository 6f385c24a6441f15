#!/usr/bin/env python3
"""The screenshot of the run page in the docs (docs/run-page.png) and the page it was taken from.

    .venv/bin/python scripts/docs_screenshot.py --write   # render the page, screenshot it, write the sidecar
    .venv/bin/python scripts/docs_screenshot.py --check   # exit 1 when the page no longer matches the picture

The page is what COMMAND writes (the tour's drifting run graded by the offline `local` judge: a veto,
the first divergence, the judge's rationale and its calibration status). The sidecar
docs/run-page.json keeps the command and the sha256 of the HTML the picture shows; --check renders
the page again and compares (tests/test_docs.py runs it), so a change to the page's templates, style
or content fails until the picture is taken again. --write needs Chromium (/usr/bin/chromium) and the
playwright package; --check needs neither.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PICTURE = ROOT / "docs" / "run-page.png"
SIDECAR = ROOT / "docs" / "run-page.json"
PAGE = "out/docs/run-page.html"
COMMAND = f"judge grade docs/tour/scenario.yaml docs/tour/drift.jsonl -q --html {PAGE}"
VIEWPORT = {"width": 1280, "height": 1480}
CHROMIUM = "/usr/bin/chromium"
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "LITELLM_OFFLINE_MODE": "true", "LITELLM_MODE": "PRODUCTION", "TOKENIZERS_PARALLELISM": "false"}


def render() -> str:
    """Run COMMAND from the repository's root (this checkout's judge) and return the page's sha256."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUDGE_") or k == "JUDGE_CACHE_DIR"}
    env.update(OFFLINE, PYTHONPATH=os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])]))
    page = ROOT / PAGE
    page.parent.mkdir(parents=True, exist_ok=True)
    page.unlink(missing_ok=True)
    argv = shlex.split(COMMAND)
    done = subprocess.run([sys.executable, "-c", "from judge.cli import main; main()", *argv[1:]], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)
    if not page.is_file():
        raise SystemExit(f"{COMMAND} wrote no page (exit {done.returncode}): {done.stderr.strip()}")
    return hashlib.sha256(page.read_bytes()).hexdigest()


def write() -> None:
    from playwright.sync_api import sync_playwright

    digest = render()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        try:
            page = browser.new_page(viewport=VIEWPORT, device_scale_factor=1)
            page.goto((ROOT / PAGE).as_uri())
            page.screenshot(path=str(PICTURE), full_page=False)
        finally:
            browser.close()
    SIDECAR.write_text(json.dumps({"command": COMMAND, "html_sha256": digest, "viewport": VIEWPORT,
                                   "regenerate": "python scripts/docs_screenshot.py --write"}, indent=2) + "\n",
                       encoding="utf-8")
    print(f"wrote {PICTURE.relative_to(ROOT)} and {SIDECAR.relative_to(ROOT)} ({digest[:12]})")


def check() -> list[str]:
    """Problems (empty: the picture shows the page COMMAND writes today)."""
    if not PICTURE.is_file() or not SIDECAR.is_file():
        return [f"{PICTURE.relative_to(ROOT)} or its sidecar is missing: run scripts/docs_screenshot.py --write"]
    recorded = json.loads(SIDECAR.read_text(encoding="utf-8"))
    if recorded.get("command") != COMMAND:
        return [f"{SIDECAR.relative_to(ROOT)} was taken with another command: run scripts/docs_screenshot.py --write"]
    digest = render()
    if digest != recorded.get("html_sha256"):
        return [f"the run page changed since {PICTURE.relative_to(ROOT)} was taken (sha256 {digest[:12]}, the "
                f"picture shows {str(recorded.get('html_sha256'))[:12]}): run scripts/docs_screenshot.py --write "
                "and look at the new picture"]
    return []


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    args = ap.parse_args()
    if args.write:
        write()
        return
    problems = check()
    for problem in problems:
        print(problem, file=sys.stderr)
    raise SystemExit(1 if problems else 0)


if __name__ == "__main__":
    main()
