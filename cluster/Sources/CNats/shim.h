#ifndef TYPINGD_CNATS_SHIM_H
#define TYPINGD_CNATS_SHIM_H
#include <nats/nats.h>
#endif
