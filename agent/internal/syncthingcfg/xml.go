// Package syncthingcfg turns the agent contract into a Syncthing home
// directory (config.xml, cert.pem, key.pem) and command line.
//
// The XML is generated from typed structs rather than a template so that
// every value is escaped, and only the settings that differ from
// Syncthing's defaults are written: Syncthing fills in the rest itself
// when it loads the file (it applies its struct defaults before decoding),
// so the file stays valid across Syncthing versions with new options.
package syncthingcfg

import (
	"encoding/xml"
	"fmt"

	"golang.org/x/crypto/bcrypt"

	"devtool.dev/agent/internal/config"
)

// ConfigVersion is the config.xml schema version of the pinned Syncthing
// (v1.30.0: lib/config CurrentVersion). Writing the current version stops
// Syncthing from running migrations over (and rewriting) our file.
const ConfigVersion = 37

type xmlConfig struct {
	XMLName xml.Name    `xml:"configuration"`
	Version int         `xml:"version,attr"`
	Folders []xmlFolder `xml:"folder"`
	Devices []xmlDevice `xml:"device"`
	GUI     xmlGUI      `xml:"gui"`
	Options xmlOptions  `xml:"options"`
}

type xmlFolder struct {
	ID               string            `xml:"id,attr"`
	Label            string            `xml:"label,attr"`
	Path             string            `xml:"path,attr"`
	Type             string            `xml:"type,attr"`
	RescanIntervalS  int               `xml:"rescanIntervalS,attr"`
	FSWatcherEnabled bool              `xml:"fsWatcherEnabled,attr"`
	FSWatcherDelayS  int               `xml:"fsWatcherDelayS,attr"`
	IgnorePerms      bool              `xml:"ignorePerms,attr"`
	AutoNormalize    bool              `xml:"autoNormalize,attr"`
	FilesystemType   string            `xml:"filesystemType"`
	Devices          []xmlFolderDevice `xml:"device"`
	IgnoreDelete     bool              `xml:"ignoreDelete"`
	DisableFsync     bool              `xml:"disableFsync"`
	MaxConflicts     int               `xml:"maxConflicts,omitempty"`
	CaseSensitiveFS  bool              `xml:"caseSensitiveFS"`
	MarkerName       string            `xml:"markerName,omitempty"`
	Paused           bool              `xml:"paused"`
}

type xmlFolderDevice struct {
	ID string `xml:"id,attr"`
}

type xmlDevice struct {
	ID                string   `xml:"id,attr"`
	Name              string   `xml:"name,attr"`
	Compression       string   `xml:"compression,attr"`
	Introducer        bool     `xml:"introducer,attr"`
	Addresses         []string `xml:"address"`
	Paused            bool     `xml:"paused"`
	AutoAcceptFolders bool     `xml:"autoAcceptFolders"`
}

type xmlGUI struct {
	Enabled  bool   `xml:"enabled,attr"`
	TLS      bool   `xml:"tls,attr"`
	Address  string `xml:"address"`
	User     string `xml:"user"`
	Password string `xml:"password"`
	APIKey   string `xml:"apikey"`
	Theme    string `xml:"theme"`
}

type xmlOptions struct {
	ListenAddresses      []string `xml:"listenAddress"`
	GlobalAnnEnabled     bool     `xml:"globalAnnounceEnabled"`
	LocalAnnEnabled      bool     `xml:"localAnnounceEnabled"`
	ReconnectIntervalS   int      `xml:"reconnectionIntervalS"`
	RelaysEnabled        bool     `xml:"relaysEnabled"`
	StartBrowser         bool     `xml:"startBrowser"`
	NATEnabled           bool     `xml:"natEnabled"`
	URAccepted           int      `xml:"urAccepted"`
	URSeen               int      `xml:"urSeen"`
	AutoUpgradeIntervalH int      `xml:"autoUpgradeIntervalH"`
	CrashReporting       bool     `xml:"crashReportingEnabled"`
	SetLowPriority       bool     `xml:"setLowPriority"`
	AnnounceLANAddresses bool     `xml:"announceLANAddresses"`
}

// ConfigXML renders config.xml for st. selfID is the device ID of st's
// certificate.
func ConfigXML(st config.Syncthing, selfID string) ([]byte, error) {
	peerID, err := NormalizeDeviceID(st.Peer.DeviceID)
	if err != nil {
		return nil, fmt.Errorf("syncthing.peer.deviceID: %w", err)
	}
	if peerID == selfID {
		return nil, fmt.Errorf("syncthing.peer.deviceID is this device's own ID %s: the two ends need different certificates", selfID)
	}
	// Syncthing accepts a plain-text password but then rewrites config.xml
	// with its hash; hashing here keeps the file ours and the secret out
	// of the PVC.
	hash, err := bcrypt.GenerateFromPassword([]byte(st.GUIPassword), bcrypt.DefaultCost)
	if err != nil {
		return nil, fmt.Errorf("hash GUI password: %w", err)
	}

	peerAddrs := st.Peer.Addresses
	if len(peerAddrs) == 0 {
		// "dynamic" with discovery off resolves to nothing: we only accept.
		peerAddrs = []string{"dynamic"}
	}
	cfg := xmlConfig{
		Version: ConfigVersion,
		Devices: []xmlDevice{
			// Only metadata is compressed: both ends are on one host or
			// one tunnel, where CPU costs more than bytes.
			{ID: selfID, Name: st.DeviceName, Compression: "metadata", Addresses: []string{"dynamic"}},
			{ID: peerID, Name: st.Peer.Name, Compression: "metadata", Addresses: peerAddrs},
		},
		GUI: xmlGUI{
			Enabled:  true,
			Address:  st.GUIAddress,
			User:     st.GUIUser,
			Password: string(hash),
			APIKey:   st.APIKey,
			Theme:    "default",
		},
		Options: xmlOptions{
			ListenAddresses:    []string{st.ListenAddress},
			ReconnectIntervalS: st.ReconnectIntervalS,
			// Everything that would reach outside the tunnel is off:
			// discovery, relays, NAT traversal, usage and crash reports,
			// upgrades. The two ends only ever talk over loopback.
			URAccepted: -1,
			URSeen:     3,
			// Renicing needs privileges we don't have as a non-root user.
			SetLowPriority: false,
		},
	}
	for _, f := range st.Folders {
		fsyncOff := true
		if f.DisableFsync != nil {
			fsyncOff = *f.DisableFsync
		}
		watch := true
		if f.FSWatcherEnabled != nil {
			watch = *f.FSWatcherEnabled
		}
		cfg.Folders = append(cfg.Folders, xmlFolder{
			ID:               f.ID,
			Label:            f.Label,
			Path:             f.Path,
			Type:             f.Type,
			RescanIntervalS:  f.RescanIntervalS,
			FSWatcherEnabled: watch,
			FSWatcherDelayS:  f.FSWatcherDelayS,
			IgnorePerms:      f.IgnorePerms,
			AutoNormalize:    true,
			FilesystemType:   "basic",
			Devices:          []xmlFolderDevice{{ID: selfID}, {ID: peerID}},
			IgnoreDelete:     f.IgnoreDelete,
			DisableFsync:     fsyncOff,
			MaxConflicts:     f.MaxConflicts,
			CaseSensitiveFS:  f.CaseSensitiveFS,
			MarkerName:       f.MarkerName,
			Paused:           f.Paused,
		})
	}
	out, err := xml.MarshalIndent(cfg, "", "    ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(out, '\n')...), nil
}
