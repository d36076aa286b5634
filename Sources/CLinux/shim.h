#ifndef TYPINGD_CLINUX_SHIM_H
#define TYPINGD_CLINUX_SHIM_H

// Linux interfaces the Glibc module does not export: malloc_trim(3), to give
// freed memory back, and signalfd(2), which lets the
// event loop wait for SIGINT/SIGTERM in poll(2) like any other input, with no
// signal handler and no global state.
#include <signal.h>
#include <sys/signalfd.h>
#include <malloc.h>

#endif
