/* store.c - (being written) */
#include "store.h"
