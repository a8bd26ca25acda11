"""The fixture's test, run in the built environment (`python -m unittest -v check_installed`), never here."""
import os
import unittest


class Installed(unittest.TestCase):
    def test_every_part_is_installed(self):
        self.assertEqual(os.path.getsize("installed.bin"), 8 * 65536)


if __name__ == "__main__":
    unittest.main()
