/* world tests: to be written. */
#include "test.h"

void suite_world(void) {
}
