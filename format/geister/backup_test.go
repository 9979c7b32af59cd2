package geister

import "testing"

// TestBackupRule checks Backup against the rule of FORMAT.md §2 on
// hand-made child lists.
func TestBackupRule(t *testing.T) {
	tests := []struct {
		children []uint8
		lastBlue bool
		want     uint8
	}{
		{[]uint8{2, 5, 0}, true, 1},
		{[]uint8{3, 4, 8, 0}, false, 5},
		{[]uint8{3, 5, 1}, false, 6},
		{[]uint8{3, 0, 1}, false, 0},
		{[]uint8{210, 7}, false, 0},
		{[]uint8{209, 7}, false, 210},
	}
	for _, tc := range tests {
		if got := Backup(tc.children, tc.lastBlue); got != tc.want {
			t.Errorf("Backup(%v, %v) = %d, want %d", tc.children, tc.lastBlue, got, tc.want)
		}
	}
}
