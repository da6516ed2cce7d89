/* tracker.c - (being written) */
#include "store.h"
