// A 128-bit integer for the intermediate products that must not overflow (rate * elapsed,
// count * window). A GCC/Clang extension; declared once here so -Wpedantic stays on elsewhere.
#pragma once

namespace sluice::core {

__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

}  // namespace sluice::core
