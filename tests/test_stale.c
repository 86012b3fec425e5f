/* stale tests: to be written. */
#include "test.h"

void suite_stale(void) {
}
