"""Look at a card as a reader on the Hub would: its Markdown body rendered to HTML, screenshotted.

    python scripts/card-screenshot.py demo-out/card/README.md docs/demo-card.png [--width 1000] [--height 4000]

The YAML front matter is dropped (the Hub shows it as metadata, not as text); the body is rendered
with markdown-it-py (CommonMark plus GFM tables, raw HTML kept for ``<details>``), styled roughly
like the Hub's model-card column, and screenshotted by headless Chromium (Debian's ``chromium``
package) with networking, sync and updates off. A maintainer's tool, not part of kldcard.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CSS = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; font-size: 15px; line-height: 1.55;
       color: #1f2328; max-width: 960px; margin: 24px auto; padding: 0 16px; }
h1, h2, h3, h4 { line-height: 1.25; margin: 1.2em 0 0.5em; } h3 { font-size: 1.3em; } h4 { font-size: 1.1em; }
table { border-collapse: collapse; display: block; overflow-x: auto; margin: 0.6em 0 1em; font-size: 13px; }
th, td { border: 1px solid #d0d7de; padding: 4px 9px; vertical-align: top; }
th { background: #f6f8fa; } tr:nth-child(2n) td { background: #fbfcfd; }
code { background: #eff1f3; padding: 0.1em 0.3em; border-radius: 4px; font-size: 85%; }
img { max-width: 100%; } details { margin: 0.4em 0; } summary { cursor: pointer; color: #0969da; }
"""


def render_html(card: Path) -> str:
    from markdown_it import MarkdownIt

    text = card.read_text(encoding="utf-8")
    body = re.sub(r"\A---\n.*?\n---\n", "", text, count=1, flags=re.S)
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(body)
    base = card.resolve().parent.as_uri() + "/"
    return (f'<!doctype html><html><head><meta charset="utf-8"><base href="{base}">'
            f"<style>{CSS}</style></head><body>{html}</body></html>")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("card", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--width", type=int, default=1000)
    ap.add_argument("--height", type=int, default=4000)
    args = ap.parse_args(argv)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("card-screenshot: no chromium on PATH (apt-get install -y chromium)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "card.html"
        page.write_text(render_html(args.card), encoding="utf-8")
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--hide-scrollbars", f"--user-data-dir={tmp}/profile", "--allow-file-access-from-files",
               f"--window-size={args.width},{args.height}", f"--screenshot={args.out.resolve()}", page.as_uri()]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0 or not args.out.is_file():
        print(f"card-screenshot: chromium failed ({proc.returncode}): {proc.stderr.strip()[-300:]}", file=sys.stderr)
        return 1
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
