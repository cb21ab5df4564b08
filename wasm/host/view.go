package host

import (
	"encoding/json"
	"fmt"

	"github.com/tracebook/tracebook/analysis/report"
)

// jsonView encodes a view the way the page and the loader carry it.
func jsonView(v report.View) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding the view: %w", err)
	}
	return b, nil
}
