#ifndef TYPINGD_CLINUX_SHIM_H
#define TYPINGD_CLINUX_SHIM_H

// Linux interfaces the Glibc module does not export, or exports only as macros:
// malloc_trim(3), to give freed memory back; eventfd(2), which the signal thread
// uses to wake the event loop; signalfd(2), which it reads the signals from; and
// the bounds of the real-time signals.
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <malloc.h>

/// The first real-time signal glibc leaves to applications (`SIGRTMIN`).
static inline int cl_sigrtmin(void) { return SIGRTMIN; }

/// The last real-time signal (`SIGRTMAX`).
static inline int cl_sigrtmax(void) { return SIGRTMAX; }

#endif
