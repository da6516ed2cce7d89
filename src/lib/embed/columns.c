/* columns.c - (being written) */
#include "store.h"
