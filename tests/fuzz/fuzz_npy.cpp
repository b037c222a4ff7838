// libFuzzer target: tenet::fuzz::check_npy (checks.h) on arbitrary bytes.
#include "tests/fuzz/checks.h"
#include "tests/fuzz/harness.h"

TENET_FUZZ_TARGET(tenet::fuzz::check_npy)
