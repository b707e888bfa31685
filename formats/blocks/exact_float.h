// Include LAST in a reference-kernel source file: from here to the end of the file the compiler
// may not fuse a multiply and an add into one FMA instruction.
//
// Why: the reference kernels must produce the same bits as the gguf package's numpy code, which
// rounds after every float32 multiply and every add. With -march=native, GCC (C++ defaults to
// -ffp-contract=fast) and clang (-ffp-contract=on) turn `d * q - m` into an FMA that rounds once,
// changing the last bit of some results.
#pragma once

#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif
