// A clock the request can pin. Templates print today's date two ways in llama.cpp:
// `strftime_now` reads time() (common/jinja/runtime.h), and the `datetime` and
// `date_string` variables read std::chrono::system_clock, which calls clock_gettime().
// The library is linked statically into this program and libc is a shared library, so
// the definitions below take the place of libc's for every caller: while a request pins
// the clock ("now"), the wall clock reads that second; otherwise the real one.

#include "harness_support.h"

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

std::time_t g_pinned_time = 0;

extern "C" int clock_gettime(clockid_t clock, struct timespec * out) {
    if (g_pinned_time != 0 && clock == CLOCK_REALTIME) {
        out->tv_sec  = g_pinned_time;
        out->tv_nsec = 0;
        return 0;
    }
    return static_cast<int>(syscall(SYS_clock_gettime, clock, out));
}

extern "C" std::time_t time(std::time_t * out) {
    timespec spec{};
    clock_gettime(CLOCK_REALTIME, &spec);
    if (out != nullptr) {
        *out = spec.tv_sec;
    }
    return spec.tv_sec;
}
