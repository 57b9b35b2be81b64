"""Throughput beyond the two measured workers: Amdahl's law fitted to each strategy's measurements.

This machine has two cores, so scale-workers.npf measures 1 and 2 workers. Amdahl's law,
X(n) = X(1) n / (1 + s (n - 1)), has one unknown once X(1) is measured: the serial fraction s, which
the 2-worker mean gives (s = 2 X(1) / X(2) - 1, at least 0). NPF has no way to draw a fitted curve
beside measured points, so this module draws the figure with matplotlib from NPF's results.
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from labkit.findings import Finding, NOT_TESTED, means, num  # noqa: E402

MODEL_WORKERS = range(1, 9)


def serial_fraction(x1, x2):
    return max(0.0, 2 * x1 / x2 - 1)


def amdahl(x1, s, n):
    return x1 * n / (1 + s * (n - 1))


def fit(df):
    """{strategy: (X(1), s)} for every strategy measured at 1 and 2 workers."""
    mpps = means(df, "MPPS", "STRATEGY", "WORKERS")
    return {st: (mpps[st, 1], serial_fraction(mpps[st, 1], mpps[st, 2]))
            for st in sorted(set(df.STRATEGY)) if (st, 1) in mpps and (st, 2) in mpps}


def draw(df, png):
    """Draws measured points and the fitted model into `png`; returns the model's sentence."""
    fits = fit(df)
    if not fits:
        return Finding(NOT_TESTED, "No strategy was measured at both 1 and 2 workers: no model.")
    spread = df.groupby(["STRATEGY", "WORKERS"])["y_MPPS"].agg(["mean", "std"]).fillna(0)
    fig, ax = plt.subplots(figsize=(11, 4.8))
    ax.axvspan(2.5, max(MODEL_WORKERS) + 0.5, color="0.93")
    ax.text(max(MODEL_WORKERS), 0.02, "model (Amdahl fit), not measured", ha="right", va="bottom",
            transform=ax.get_xaxis_transform(), color="0.35")
    for i, (strategy, (x1, s)) in enumerate(fits.items()):
        color = f"C{i}"
        measured = spread.loc[strategy]
        ax.errorbar(measured.index, measured["mean"], yerr=measured["std"], color=color, marker="o",
                    capsize=3, label=f"{strategy} (s = {s:.2f})")
        ax.plot(list(MODEL_WORKERS), [amdahl(x1, s, n) for n in MODEL_WORKERS], color=color,
                linestyle="--", linewidth=1)
    ax.set_xlabel("Workers (1-2 measured, solid; 3-8 model, dashed)")
    ax.set_ylabel("Throughput (Mpps)")
    ax.set_xlim(0.5, max(MODEL_WORKERS) + 0.5)
    ax.set_ylim(bottom=0)
    ax.grid(axis="y", linestyle=":")
    ax.legend(loc="upper left", ncol=2, fontsize="small", title="strategy (serial fraction)")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    n = max(MODEL_WORKERS)
    at_n = ", ".join(f"{num(amdahl(x1, s, n))} ({st})" for st, (x1, s) in
                     sorted(fits.items(), key=lambda kv: -amdahl(kv[1][0], kv[1][1], n)))
    return Finding("model", f"Not measured: fitted on the one- and two-worker means, Amdahl's law gives "
                            f"at {n} workers {at_n} Mpps; it has no term for the coherence traffic "
                            f"that grows with the cores and makes [lb-flowtables]'s mutex curve fall after two, "
                            f"so read it as optimistic for the shared tables.")
