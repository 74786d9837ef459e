# SPDX-License-Identifier: Apache-2.0
# test/conformance/ — policy conformance cases driven through `boxctl policy`.
CHECK_SCRIPTS += test/conformance/run.sh
CHECK_SCRIPTS += test/conformance/policy-cli.sh
