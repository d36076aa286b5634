#ifndef TYPINGD_CZLIB_SHIM_H
#define TYPINGD_CZLIB_SHIM_H
#include <zlib.h>
#endif
