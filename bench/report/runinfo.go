package report

import (
	"encoding/json"
	"fmt"

	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/profiles"
)

// runProfile is the part of a result's embedded resolved profile that
// reports show. The document keeps the profile opaque (bench/result does not
// depend on the profile types), so it is decoded leniently here.
type runProfile struct {
	Metadata struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"metadata"`
	Storm *struct {
		Kind  string `json:"kind"`
		Waves struct {
			Size     string          `json:"size"`
			Interval result.Duration `json:"interval"`
		} `json:"waves"`
	} `json:"storm"`
	Repetitions profiles.Repetitions `json:"repetitions"`
	Gates       *profiles.Gates      `json:"gates"`
}

func decodeProfile(r *result.Result) (runProfile, error) {
	var p runProfile
	if len(r.Run.Profile) == 0 {
		return p, nil
	}
	if err := json.Unmarshal(r.Run.Profile, &p); err != nil {
		return p, fmt.Errorf("decoding the run's profile: %w", err)
	}
	return p, nil
}
