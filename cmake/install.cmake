# SPDX-License-Identifier: MIT
# Placeholder; install rules (header, libraries, obc.pc, CMake package).
