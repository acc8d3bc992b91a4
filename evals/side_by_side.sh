#!/usr/bin/env bash
# Cold ask, warm ask p50 and reranked search p50 of two checkouts on one store, alternated, in one run:
#   bash evals/side_by_side.sh OLD_CHECKOUT NEW_CHECKOUT STORE [ROUNDS]
# Each checkout's rag/ is put first on PYTHONPATH, ahead of the installed one.
set -euo pipefail
old="$1" new="$2" store="$3" rounds="${4:-2}"
here="$(cd "$(dirname "$0")" && pwd)"
for round in $(seq "$rounds"); do
    for checkout in "$old" "$new"; do
        start=$(date +%s.%N)
        PYTHONPATH="$checkout" rag ask "which papers study machine unlearning?" --store "$store" >/dev/null 2>&1
        end=$(date +%s.%N)
        echo "round $round $checkout cold_ask_s $(echo "$end - $start" | bc)"
        echo "round $round $checkout warm $(PYTHONPATH="$checkout" python "$here/latency_warm.py" "$store" 20)"
    done
done
