// The system zlib, for Zephyr's raw DEFLATE adapter off Apple platforms (Linux). The
// header comes with zlib1g-dev (Debian, Ubuntu) or zlib-devel (Fedora, Amazon Linux),
// which swift.org's Linux prerequisites and the swift Docker images already install;
// the library itself is the libz.so.1 that the toolchain's Foundation links.
#include <zlib.h>
