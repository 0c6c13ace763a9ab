// The program's heap: set once, at the start of main, before the first large allocation.
#pragma once

namespace untangle::cli {

// On Linux with glibc: one heap that keeps what is freed, reserved up front and backed by
// transparent huge pages. Elsewhere (and under a sanitizer's allocator) it does nothing.
void use_large_page_heap();

}  // namespace untangle::cli
