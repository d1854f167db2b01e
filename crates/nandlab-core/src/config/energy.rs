//! `[device.energy]`: the power a die draws while it senses, programs and
//! erases (so a mode's energy per operation follows its times), the energy
//! of a byte on a flash channel, the host link's power while it moves data,
//! and the controller's power while commands are in flight and while idle.
//! Defaults: ONFI datasheets' 25 mA at 3.3 V per busy die; 40 pJ per byte
//! on an NV-DDR channel; a SATA PHY's 0.3 W, a PCIe x4 link's 0.8 W; a
//! controller at 1.5 W active, 0.3 W idle (SNIA's 2009 SATA drive: 8 K-IOPS
//! at 3 K-IOPS/W, about 2.7 W).

use super::raw::RawEnergy;
use super::values::{err, number, shown};
use super::ConfigError;
use crate::host::interface::Interface;
use crate::stats::energy::EnergyConfig;

pub(super) fn validate(e: &RawEnergy, interface: &Interface) -> Result<EnergyConfig, ConfigError> {
    let value = |k: &str, v: Option<f64>, default: f64, hi: f64| {
        number(
            &format!("[device.energy] {k}"),
            v,
            default,
            0.0,
            hi,
            "a value",
        )
    };
    let link = if interface.name.starts_with("nvme") {
        0.8
    } else {
        0.3
    };
    let controller_active_w = value("controller_active_w", e.controller_active_w, 1.5, 100.0)?;
    let controller_idle_w = value("controller_idle_w", e.controller_idle_w, 0.3, 100.0)?;
    if controller_idle_w > controller_active_w {
        return err(
            "[device.energy] controller_idle_w",
            format!(
                "an idle controller draws no more than an active one ({} W), found {} W",
                shown(controller_active_w),
                shown(controller_idle_w)
            ),
        );
    }
    Ok(EnergyConfig {
        read_mw: value("read_mw", e.read_mw, 82.5, 10_000.0)?,
        program_mw: value("program_mw", e.program_mw, 82.5, 10_000.0)?,
        erase_mw: value("erase_mw", e.erase_mw, 82.5, 10_000.0)?,
        channel_pj_per_byte: value("channel_pj_per_byte", e.channel_pj_per_byte, 40.0, 1e6)?,
        link_w: value("link_w", e.link_w, link, 100.0)?,
        controller_active_w,
        controller_idle_w,
    })
}
