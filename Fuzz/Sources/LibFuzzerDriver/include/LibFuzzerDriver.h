#ifndef LIB_FUZZER_DRIVER_H
#define LIB_FUZZER_DRIVER_H

#include <stddef.h>
#include <stdint.h>

// libFuzzer's entry for programs that have their own main (LLVM's libFuzzer.rst, "Using
// libFuzzer as a library"). SwiftPM renames an executable's main, so FuzzCBOR starts the
// fuzzer itself rather than relying on libFuzzer's main.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
