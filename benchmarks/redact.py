"""Redaction: recall and precision per entity type, written and spoken, on generated sets.

The sets (benchmarks/lib/redact_set.py): templates x written and spoken
forms x generated values, for the project's templates and for a held-out
set of other templates; the example suite's lines are the negatives. With
the default configuration (no names endpoint: names and addresses by pattern
only), every text is redacted and scored:

- **recall**: a value counts as caught when findings cover at least 90 % of
  its characters (whatever type they say: the value is gone);
- **precision**: a finding of a type counts as right when it overlaps a value
  of that type; findings in the example lines are all wrong.

Usage: ``python benchmarks/redact.py [--quick] [--json]`` (``--quick``: one
value per template; the full run: 12). Prints a table; never asserts.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.lib.redact_set import (  # noqa: E402
    HELD_OUT,
    PROJECT,
    VALUES,
    Example,
    example_lines,
    generate,
)
from vae.redaction.redactor import make_redactor  # noqa: E402


def score(examples: list[Example], negatives: list[str]) -> dict[str, Any]:
    redactor = make_redactor()
    caught: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    right: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    missed: list[str] = []
    started = time.perf_counter()
    for ex in examples:
        _, found = redactor.text(ex.text)
        # "the" of "the third of March" is not the date: the value starts after it.
        if ex.text[ex.start : ex.start + 4].lower() == "the ":
            ex = Example(ex.entity, ex.form, ex.text, ex.start + 4, ex.end)
        covered = sum(max(0, min(f.end, ex.end) - max(f.start, ex.start)) for f in found) / max(
            1, ex.end - ex.start
        )
        row = caught[(ex.entity, ex.form)]
        row[1] += 1
        if covered >= 0.9:
            row[0] += 1
        elif len(missed) < 40:
            missed.append(f"{ex.entity}/{ex.form}: {ex.text}")
        for f in found:
            hit = right[(f.entity, ex.form)]
            hit[1] += 1
            hit[0] += int(f.entity == ex.entity and f.start < ex.end and ex.start < f.end)
    false_positives = []
    for line in negatives:
        _, found = redactor.text(line)
        for f in found:
            right[(f.entity, "example lines")][1] += 1
            false_positives.append(f"{f.entity}: {line[f.start : f.end]!r} in {line!r}")
    seconds = time.perf_counter() - started
    table = []
    for entity in VALUES:
        for form in ("written", "spoken"):
            c, n = caught[(entity, form)]
            ok, total = right[(entity, form)]
            table.append({"entity": entity, "form": form, "values": n,
                          "recall": round(c / n, 3) if n else None,
                          "precision": round(ok / total, 3) if total else None})  # fmt: skip
    texts = len(examples) + len(negatives)
    return {"rows": table, "false_positives_in_example_lines": false_positives,
            "negative_lines": len(negatives), "missed": missed,
            "ms_per_text": round(1000 * seconds / max(1, texts), 2)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one value per template (CI)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--seed", type=int, default=37)
    args = parser.parse_args()
    per = 1 if args.quick else 12
    negatives = example_lines(ROOT / "examples" / "suite")
    results = {
        "project": score(generate(PROJECT, per, args.seed), negatives),
        "held_out": score(generate(HELD_OUT, per, args.seed + 1000), []),
    }
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print("| type | form | project recall | project precision | held-out recall "
          "| held-out precision |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    held = {(r["entity"], r["form"]): r for r in results["held_out"]["rows"]}
    for r in results["project"]["rows"]:
        h = held[(r["entity"], r["form"])]
        print(f"| {r['entity']} | {r['form']} | {r['recall']} | {r['precision']} "
              f"| {h['recall']} | {h['precision']} |")  # fmt: skip
    project = results["project"]
    print(f"\n{project['rows'][0]['values']} values per type and form (project set); "
          f"example lines: {project['negative_lines']}, findings in them: "
          f"{len(project['false_positives_in_example_lines'])}; "
          f"{project['ms_per_text']} ms per text")  # fmt: skip
    for line in project["false_positives_in_example_lines"]:
        print(f"  false positive: {line}")
    for name, result in results.items():
        for line in result["missed"][:15]:
            print(f"  missed ({name}): {line}")


if __name__ == "__main__":
    main()
