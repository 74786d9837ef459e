# SPDX-License-Identifier: Apache-2.0
# bench/load/ — the service under load for 2 minutes (run.sh: test/integration/t-load.sh with
# LOAD_SECONDS=120); make check-slow runs the same test for 20 s.
BENCH_SCRIPTS += bench/load/run.sh
