/* oom tests: to be written. */
#include "test.h"

void suite_oom(void) {
}
