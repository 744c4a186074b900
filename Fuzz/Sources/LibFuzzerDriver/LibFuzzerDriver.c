// Declarations only: libFuzzer itself is linked in by -sanitize=fuzzer.
#include "LibFuzzerDriver.h"
