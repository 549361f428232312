#!/usr/bin/env python3
"""Ratios from one bench_kernels JSON run (medians of the repetitions).

  bench_kernels --benchmark_repetitions=15 --benchmark_report_aggregates_only=true \
      --benchmark_enable_random_interleaving=true --benchmark_min_time=0.05 \
      --benchmark_format=json --benchmark_out=run.json
  bench/summarize.py run.json
"""
import json
import re
import sys


def load(path):
    with open(path) as f:
        data = json.load(f)
    med = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name", "median") != "median":
            continue
        name = re.sub(r"(/min_time:[0-9.]+)?(/real_time)?(_median)?$", "", b["run_name"] if "run_name" in b else b["name"])
        med[name] = b
    return data.get("context", {}), med


def fields(name):
    return dict(kv.split("=", 1) for kv in name.split("/") if "=" in kv)


def t_us(b):
    scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[b.get("time_unit", "us")]
    return b["real_time"] * scale


def main():
    ctx, med = load(sys.argv[1])
    out = []
    p = out.append
    peaks = {n.split("/")[1]: b["MACs/s"] for n, b in med.items() if n.startswith("peak/")}
    peak = max(peaks.values()) if peaks else float("nan")
    p(f"host: {ctx.get('host_name', '?')}, {ctx.get('num_cpus', '?')} CPUs at {ctx.get('mhz_per_cpu', '?')} MHz")
    p("dot-product peaks (1 thread): " + ", ".join(f"{k} {v / 1e9:.1f} GMAC/s" for k, v in peaks.items()))

    def lb(n, k, m, t, b, g, temp="cold"):
        return med.get(f"lowbit/n={n}/k={k}/m={m}/t={t}/b={b}/g={g}/{temp}")

    def stream_best(n, k, temp):
        c = [(t_us(b), name) for name, b in med.items()
             if name.startswith("stream/") and f"/n={n}/k={k}/" in name and name.endswith(temp)]
        return min(c) if c else (float("nan"), "-")

    shapes = sorted({(int(fields(n)["n"]), int(fields(n)["k"])) for n in med if n.startswith("lowbit/")})
    p("\n## Decode (m=1, 4-bit, 1 thread): lowbit time vs the fastest streaming read of the same bytes")
    p("| shape | group | temp | lowbit us | stream us (best shape) | efficiency |")
    p("|---|---|---|---|---|---|")
    for n, k in shapes:
        for temp in ("cold", "hot"):
            st, sname = stream_best(n, k, temp)
            for g in (32, 128):
                b = lb(n, k, 1, 1, 4, g, temp)
                if b and st == st:
                    p(f"| {n}x{k} | {g} | {temp} | {t_us(b):.0f} | {st:.0f} ({sname.split('/')[1]}/{sname.split('/')[4]}) | {st / t_us(b) * 100:.0f} % |")

    mix = med.get("ceiling/avx2_sums_gemv_mix")
    hot = lb(4096, 4096, 1, 1, 4, 32, "hot")
    if mix and hot and "avx2" in hot.get("label", ""):
        floor_us = 4096 * 4096 / mix["MACs/s"] * 1e6
        p(f"\nAVX2 cached decode (4096x4096 g32, hot): the `_sums` GEMV's vector operations alone take "
          f"{floor_us:.0f} us on this core ({mix['MACs/s'] / 1e9:.1f} GMAC/s); lowbit {t_us(hot):.0f} us = "
          f"{floor_us / t_us(hot) * 100:.0f} % of that floor; the floor is "
          f"{stream_best(4096, 4096, 'hot')[0] / floor_us * 100:.0f} % of the L3 read's speed.")

    p("\n## Small batches (4-bit, g32, 1 thread): time per row and share of the dot peak")
    p("| shape | " + " | ".join(f"m={m}" for m in (1, 2, 3, 4, 8, 16)) + " | m=8 % peak |")
    p("|---|" + "---|" * 7)
    for n, k in shapes:
        row, m8 = [], ""
        for m in (1, 2, 3, 4, 8, 16):
            b = lb(n, k, m, 1, 4, 32)
            row.append(f"{t_us(b) / m:.0f}" if b else "-")
            if m == 8 and b:
                m8 = f"{b['MACs/s'] / peak * 100:.0f} %"
        p(f"| {n}x{k} | " + " | ".join(row) + f" | {m8} |")

    p("\n## Prefill (m=128): share of the 1-thread dot peak (2 threads: of twice the peak)")
    p("| shape | bits | g32 t=1 | g128 t=1 | g32 t=2 | g128 t=2 |")
    p("|---|---|---|---|---|---|")
    for n, k in shapes:
        for bits in (4, 2, 8):
            cells = []
            for t in (1, 2):
                for g in (32, 128):
                    b = lb(n, k, 128, t, bits, g)
                    cells.append(f"{b['MACs/s'] / (peak * t) * 100:.0f} % ({b['MACs/s'] / 1e9:.0f} G)" if b else "-")
            if any(c != "-" for c in cells):
                p(f"| {n}x{k} | {bits} | {cells[0]} | {cells[1]} | {cells[2]} | {cells[3]} |")

    p("\n## Against OpenBLAS f32 (sgemv / sgemm on the same shapes): speed-up of lowbit 4-bit g32")
    p("| shape | " + " | ".join(f"m={m} t={t}" for m in (1, 8, 128) for t in (1, 2)) + " |")
    p("|---|" + "---|" * 6)
    for n, k in shapes:
        cells = []
        for m in (1, 8, 128):
            for t in (1, 2):
                b = lb(n, k, m, t, 4, 32)
                o = med.get(f"openblas/n={n}/k={k}/m={m}/t={t}/b=32/g=0")
                cells.append(f"{t_us(o) / t_us(b):.1f}x" if b and o else "-")
        p(f"| {n}x{k} | " + " | ".join(cells) + " |")

    p("\n## Against the scalar reference kernel (4096x4096, 4-bit, g32, 1 thread)")
    for m in (1, 8):
        s = med.get(f"scalar/n=4096/k=4096/m={m}/t=1/b=4/g=32/cold")
        b = lb(4096, 4096, m, 1, 4, 32)
        if s and b:
            p(f"- m={m}: scalar {t_us(s):.0f} us, lowbit {t_us(b):.0f} us: {t_us(s) / t_us(b):.0f}x")
    print("\n".join(out))


if __name__ == "__main__":
    main()
