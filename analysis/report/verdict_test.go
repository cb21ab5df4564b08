package report

import (
	"strings"
	"testing"
)

// TestDemoteReachesTheEvidenceTable: an issue the cross-check caps to a
// hypothesis reads hypothesis in the Evidence table's interpretation too,
// not confirmed next to an issue marked (hypothesis).
func TestDemoteReachesTheEvidenceTable(t *testing.T) {
	title := "Host syncs drain the GPU and leave it idle until the next launch"
	d := &Doc{
		Confirmed: []string{title + ": the gap starts inside the sync", "Host copies go through pageable memory and block the host"},
		Evidence: []EvidenceRow{
			{Area: "Synchronization waits", Interpretation: title + " (critical, confirmed); see the issues above."},
			{Area: "Memory copies", Interpretation: "Host copies go through pageable memory and block the host (minor, confirmed); see the issues above."},
		},
	}
	demote(d, title)
	if got := d.Evidence[0].Interpretation; got != title+" (critical, hypothesis); see the issues above." {
		t.Errorf("sync row = %q, want the issue as a hypothesis", got)
	}
	if got := d.Evidence[1].Interpretation; !strings.Contains(got, "(minor, confirmed)") {
		t.Errorf("another issue's row changed: %q", got)
	}
	if len(d.Confirmed) != 1 || len(d.Hypotheses) != 1 || !strings.HasPrefix(d.Hypotheses[0], title) {
		t.Errorf("Confirmed %q, Hypotheses %q: want the sync claim moved", d.Confirmed, d.Hypotheses)
	}
}
