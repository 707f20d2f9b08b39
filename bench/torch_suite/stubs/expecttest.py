# SPDX-License-Identifier: MIT
# Minimal stand-in for the 'expecttest' package (not packaged in Debian 12);
# torch.testing._internal.common_utils only subclasses TestCase and reads ACCEPT.
import unittest
ACCEPT = False
class TestCase(unittest.TestCase):
    longMessage = True
    def assertExpectedInline(self, actual, expect, skip=0):
        self.assertEqual(actual, expect)
