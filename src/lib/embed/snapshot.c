/* snapshot.c - (being written) */
#include "store.h"
