"""Time `score-predictions ranked` on a file with one very long list (issue 34: one 300,000-id list took minutes).

Writes, in a temporary folder, positives {q: [q]} for QUERIES queries and a ranked i2t file where every query
ranks three ids and query 0 ranks the whole gallery of LENGTH ids, then prints the seconds of one
`score_predictions` call. Run it against another checkout with PYTHONPATH=<that checkout>/src.

    python benchmarks/ranked_long_list.py [--queries 1000] [--length 300000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from itmbench.papers.predictions import ScoreOptions, score_predictions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--length", type=int, default=300_000)
    args = parser.parse_args()
    n, length = args.queries, max(args.length, args.queries)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        positives = {str(q): [q] for q in range(length)}  # the gallery: ids 0..length-1
        ranked = {str(q): [(q + 1) % n, q, (q + 2) % n] for q in range(n)}
        ranked["0"] = list(range(length))
        (folder / "gt_i2t.json").write_text(json.dumps({k: v for k, v in positives.items() if int(k) < n}))
        (folder / "gallery_t2i.json").write_text(json.dumps({str(c): [c] for c in range(length)}))
        (folder / "m_i2t.json").write_text(json.dumps(ranked))
        start = time.perf_counter()
        score_predictions(
            "ranked",
            [folder / "m_i2t.json"],
            positives=[folder / "gt_i2t.json", folder / "gallery_t2i.json"],
            options=ScoreOptions(n_boot=1000),
        )
        print(f"{n} queries, one list of {length:,} ids: {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
