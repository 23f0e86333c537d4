#!/usr/bin/env python3
"""Reads a `chromate bench-snapshot --format json` report and prints, per page, chromate's
default-view time (the median of the page's `--repeat` timed calls; use 7 or more on a shared
machine) and tokens (o200k_base when counted, else bytes / 4) against the best peer's on that
page, the pages over 1/2 (for tokens, the size of the best peer's tree they stop at), then the
pooled figures per tool: the numbers of benches/README.md, "bench-snapshot against the peers".

    python3 benches/peers/bench_ratios.py report.json
"""
import json
import sys


def main(path):
    report = json.load(open(path))
    names = [t["name"] for t in report["tools"] if t["status"] == "measured"]
    peers = [n for n in names if n != "chromate"]
    worst_time = worst_tokens = 0.0
    over = []
    ratios, time_ratios = [], []
    print(f"{'page':<42} {'chromate ms':>11} {'best peer ms':>12} {'ratio':>6} "
          f"{'tokens':>7} {'best peer':>9} {'ratio':>6}")
    for page in report["pages"]:
        by = {r["tool"]: r for r in page["results"] if "error" not in r}
        ours = by.get("chromate")
        theirs = [by[p] for p in peers if p in by]
        if not ours or not theirs:
            continue
        tok = lambda r: r["tokens"] if r["tokens"] is not None else r["tokens_estimate"]
        best_time = min(r["time_ms"]["median"] for r in theirs)
        best_tok = min(tok(r) for r in theirs)
        rt = ours["time_ms"]["median"] / best_time
        rk = tok(ours) / best_tok
        worst_time, worst_tokens = max(worst_time, rt), max(worst_tokens, rk)
        ratios.append((page["label"], best_tok, rk))
        time_ratios.append((page["label"], rt))
        if rt > 0.5 or rk > 0.5:
            over.append(page["label"])
        print(f"{page['label'][-42:]:<42} {ours['time_ms']['median']:>11.1f} {best_time:>12.1f} "
              f"{rt:>6.2f} {tok(ours):>7} {best_tok:>9} {rk:>6.2f}")
    print(f"\nworst ratio: time {worst_time:.2f}, tokens {worst_tokens:.2f}; "
          f"pages over 1/2: {len(over)} {over}")
    tokens_over = [(label, best, rk) for label, best, rk in ratios if rk > 0.5]
    time_over = [label for label, rt in time_ratios if rt > 0.5]
    print(f"time over 1/2 of the best peer (medians of {report.get('repeat', '?')} calls): "
          f"{len(time_over)} of {len(time_ratios)} {time_over}")
    if tokens_over:
        bound = max(best for _, best, _ in tokens_over)
        rest = [rk for _, best, rk in ratios if best > bound]
        print(f"tokens over 1/2: {len(tokens_over)} of {len(ratios)}, every one where the best "
              f"peer's tree is {bound} tokens or fewer (worst {max(rk for *_, rk in tokens_over):.2f}); "
              f"above that ({len(rest)} pages) worst {max(rest, default=0):.2f}")
    else:
        print(f"tokens: at most 1/2 of the best peer's on all {len(ratios)} pages")
    print(f"\n{'tool':<22} {'pages':>5} {'median ms':>9} {'p90 ms':>8} {'bytes':>8} "
          f"{'tokens':>7} {'recall':>7} {'precision':>9}")
    for s in report["summary"]:
        t = s["tokens_median"] if s["tokens_median"] is not None else s["tokens_estimate_median"]
        print(f"{s['tool']:<22} {s['pages']:>5} {s['time_ms']['median']:>9.1f} "
              f"{s['time_ms']['p90']:>8.1f} {s['bytes_median']:>8.0f} {t:>7.0f} "
              f"{s['recall']:>7.3f} {s['precision']:>9.3f}")


if __name__ == "__main__":
    main(sys.argv[1])
