"""The suite's two tiers.  ``nox -s tests`` (CI, the README's test command) runs every item not
marked ``slow``; ``nox -s slow`` runs the marked ones (before a release, or when the code they cover
changes).

What is slow, and why it can wait: the properties of our own implementations and the torch ≈ jax
agreement at **float16 and bfloat16** — half of those items and half of their time (1,400 of the
4,200 core-seconds the whole suite took in session 11, jax compiling a program per shape and dtype),
while the engine's half-precision judgement stays in CI through the meta-tests (broken variants
caught at float16, e.g. ``iou_half_native``) and the textbook audits (every dtype, third-party
bound); single items that took 30 s or more of one core, each marked where it is defined; the
torch ≈ jax agreement at every dtype (test_agreement.py: implied by the two value properties, which
CI runs; 300 core-seconds); and soft_topk's wide-reverse-pass regression but for torch's cheap
items (test_soft_topk_backward.py, 18–42 s an item); and the **extreme tier of the jax
implementations** (``stability[...]``: magnitudes near the dtype's range, large sharpness), 231 of
the 1,945 core-seconds of a CI run in session 13 (junit durations; jax compiles a program for each
drawn shape), while CI keeps that tier for torch, whose implementations state the same formulas.
"""

from losscheck.properties.dtypes import HALF

#: per-dtype items (``Property.dtype``) in these dtypes are in the slow tier
SLOW_DTYPES = HALF
#: (framework, property kind) pairs in the slow tier at every dtype: the extreme tier of jax
SLOW_KINDS = {("jax", "stability")}
