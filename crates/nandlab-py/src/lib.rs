//! Python bindings (`nandlab._core`): a config goes in as TOML or JSON text,
//! results come out as Python objects built straight from the engine's structs
//! (`to_python`: dicts, lists, numbers; no JSON text in between), and a
//! phase's time series as columns, a NumPy array each. The simulation runs
//! with the GIL released; Python is called back only for progress, a few times
//! a second.

mod errors;
mod to_python;

use std::collections::BTreeMap;

use errors::{
    guard, quiet_panics, sim_error, ConfigError, InternalError, Interrupted, Panicked,
    SimulationError, SnapshotError, TraceError,
};
use nandlab_core::config::presets as builtin;
use nandlab_core::host::trace;
use nandlab_core::media::{chip, wear};
use nandlab_core::sim::{ConfigText, Every, Progress, SnapshotPlan};
use nandlab_core::stats::{Row, ROW_COLUMNS, ROW_INTEGER_COLUMNS};
use nandlab_core::{Config, PhaseResult, SimError, Simulator as CoreSimulator};
use nandlab_nbd as nbd;
use numpy::IntoPyArray;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use to_python::to_python;

/// A phase's time series as columns: the engine's row columns in order, each a
/// NumPy array (int64 for counts, float64 else), filled in one pass over the rows.
fn timeseries<'py>(py: Python<'py>, rows: &[Row]) -> PyResult<Bound<'py, PyDict>> {
    let mut columns = vec![Vec::with_capacity(rows.len()); ROW_COLUMNS.len()];
    for row in rows {
        for (column, value) in columns.iter_mut().zip(row.values()) {
            column.push(value);
        }
    }
    let series = PyDict::new(py);
    for (name, column) in ROW_COLUMNS.iter().zip(columns) {
        if ROW_INTEGER_COLUMNS.contains(name) {
            let counts: Vec<i64> = column.into_iter().map(|v| v as i64).collect();
            series.set_item(*name, counts.into_pyarray(py))?;
        } else {
            series.set_item(*name, column.into_pyarray(py))?;
        }
    }
    Ok(series)
}

/// One simulated drive; phases run in order on the same state.
/// A phase's results as `run_phase` returns them.
fn phase_dict<'py>(py: Python<'py>, phase: &PhaseResult) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("summary", to_python(py, &phase.summary)?)?;
    out.set_item("jobs", to_python(py, &phase.jobs)?)?;
    out.set_item("power_losses", to_python(py, &phase.power_losses)?)?;
    out.set_item("timeseries", timeseries(py, &phase.rows)?)?;
    Ok(out)
}

#[pyclass(module = "nandlab._core")]
struct Simulator {
    sim: CoreSimulator,
    /// The config as given: a snapshot keeps it to build the drive again.
    text: ConfigText,
    /// Set when a run hit an internal error: the state may be inconsistent.
    broken: Option<String>,
    /// Why a run with a snapshot plan is stopping: a signal's exception, or
    /// the progress callback's. Kept if the phase ended before it could
    /// pause: the next phase then pauses at once.
    stop_cause: Option<PyErr>,
    /// The data a served drive read back from its file holds, until `serve` takes it.
    served: Option<nbd::ServedData>,
}

#[pymethods]
impl Simulator {
    #[new]
    #[pyo3(signature = (config, format = None, source = None, seed = None))]
    fn new(
        py: Python<'_>,
        config: &Bound<'_, PyAny>,
        format: Option<&Bound<'_, PyAny>>,
        source: Option<&Bound<'_, PyAny>>,
        seed: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let config = &text_argument("Simulator", "config", config)?;
        let format = &match format {
            Some(f) => text_argument("Simulator", "format", f)?,
            None => "toml".into(),
        };
        let source = &match source {
            Some(s) => text_argument("Simulator", "source", s)?,
            None => "<config>".into(),
        };
        let seed = seed.map(seed_argument).transpose()?;
        let mut cfg = parse_config(config, format, source)?;
        if let Some(s) = seed {
            cfg.seed = s;
        }
        let sim = guard(|| CoreSimulator::try_new(cfg))
            .map_err(PyErr::from)?
            .map_err(|e| sim_error(py, e, None))?;
        let text = ConfigText {
            text: config.to_string(),
            json: format == "json",
            source: source.to_string(),
            seed,
        };
        Ok(Simulator {
            sim,
            text,
            broken: None,
            stop_cause: None,
            served: None,
        })
    }

    /// A simulator read back from a snapshot, where it was paused; it keeps
    /// writing snapshots to `path` as the run did.
    #[staticmethod]
    fn resume(py: Python<'_>, path: &Bound<'_, PyAny>) -> PyResult<Self> {
        let path = path_argument("Simulator.resume", "path", path)?;
        not_a_special_file(&path)?;
        let sim = py
            .detach(|| guard(|| CoreSimulator::resume(&path)))
            .map_err(PyErr::from)?
            .map_err(|e| sim_error(py, e, None))?;
        let text = sim
            .snapshot_plan()
            .expect("a resumed simulator has its snapshot plan")
            .config
            .clone();
        Ok(Simulator {
            sim,
            text,
            broken: None,
            stop_cause: None,
            served: None,
        })
    }

    /// A served drive read back from the file `serve(snapshot=...)` wrote: its simulator (every
    /// config phase done), and the data its clients wrote, which the next `serve` holds; with
    /// what was kept beside it (`served_extra`). `store_limit`: as for `serve`; `data`: the
    /// data file the drive keeps its data in (None: wherever it does), or a new one for a drive
    /// whose data is in its own file.
    #[staticmethod]
    #[pyo3(signature = (path, store_limit = None, data = None))]
    fn load_served(
        py: Python<'_>,
        path: &Bound<'_, PyAny>,
        store_limit: Option<u64>,
        data: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<(Self, String)> {
        let path = path_argument("Simulator.load_served", "path", path)?;
        not_a_special_file(&path)?;
        let data = data
            .map(|d| path_argument("Simulator.load_served", "data", d))
            .transpose()?;
        let store_limit = store_limit_or_available(store_limit)?;
        let saved = py
            .detach(|| guard(|| nbd::saved::load(&path, store_limit, data.as_deref())))
            .map_err(PyErr::from)?
            .map_err(|e| sim_error(py, e, None))?;
        Ok((
            Simulator {
                sim: saved.sim,
                text: saved.config,
                broken: None,
                stop_cause: None,
                served: Some(saved.data),
            },
            saved.extra,
        ))
    }

    /// Whether `path` holds a served drive that `load_served` reads.
    #[staticmethod]
    fn is_served_drive(path: &Bound<'_, PyAny>) -> PyResult<bool> {
        let path = path_argument("Simulator.is_served_drive", "path", path)?;
        Ok(path.is_file() && nbd::saved::is_saved(&path))
    }

    /// Writes a snapshot to `path` when the run is stopped (by SIGINT, any
    /// exception a signal handler raises, or the progress callback raising:
    /// `run_phase` then raises `Interrupted`) and, with `every` ("10s",
    /// "5min" of simulated time, or "50GiB" the host moved), that often.
    /// A snapshot of another run at `path` is overwritten only with `force`.
    #[pyo3(signature = (path, every = None, force = false))]
    fn snapshot_to(
        &mut self,
        path: &Bound<'_, PyAny>,
        every: Option<&str>,
        force: bool,
    ) -> PyResult<()> {
        let path = path_argument("Simulator.snapshot_to", "path", path)?;
        let every = every
            .map(|e| {
                Every::parse(e).map_err(|m| ConfigError::new_err(format!("snapshot_every: {m}")))
            })
            .transpose()?;
        // It reads what is at `path` (another run's snapshot, perhaps a damaged one): guarded.
        guard(|| nandlab_core::sim::snapshot_writable(&path, &self.text, force))
            .map_err(PyErr::from)?
            .map_err(|e| SnapshotError::new_err(e.to_string()))?;
        let extra = self
            .sim
            .snapshot_plan()
            .map(|p| p.extra.clone())
            .unwrap_or_default();
        self.sim.snapshot_to(SnapshotPlan {
            path,
            every,
            config: self.text.clone(),
            extra,
        });
        Ok(())
    }

    /// What the caller keeps in each snapshot (the results of finished
    /// phases, output options); read back by `resume`.
    #[getter]
    fn get_snapshot_extra(&self) -> Option<String> {
        self.sim.snapshot_plan().map(|p| p.extra.clone())
    }

    #[setter]
    fn set_snapshot_extra(&mut self, extra: String) {
        self.sim.set_snapshot_extra(extra);
    }

    /// The snapshot file, if the run writes any.
    #[getter]
    fn snapshot_path(&self) -> Option<std::path::PathBuf> {
        self.sim.snapshot_plan().map(|p| p.path.clone())
    }

    /// The config phase a snapshot paused (None: none is under way);
    /// `run_phase` of it goes on where it was.
    #[getter]
    fn paused_phase(&self) -> Option<usize> {
        self.sim.paused_phase()
    }

    /// The resolved config (preset applied, every default filled in).
    #[getter]
    fn config<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.sim.config().to_json())
    }

    /// The config as it was given (a resumed run's too): its text, its
    /// format ("toml" or "json") and the seed given over the config's own
    /// (None: the config's).
    #[getter]
    fn given_config(&self) -> (String, &'static str, Option<u64>) {
        let t = &self.text;
        let format = if t.json { "json" } else { "toml" };
        (t.text.clone(), format, t.seed)
    }

    /// Derived figures of the drive: geometry, capacities, interface; by key
    /// in alphabetical order.
    #[getter]
    fn device<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        drive_figures(py, self.sim.config())
    }

    #[getter]
    fn phase_names(&self) -> Vec<String> {
        self.sim
            .config()
            .phases
            .iter()
            .map(|p| p.name.clone())
            .collect()
    }

    /// Runs phase `index`; returns {"summary": dict, "jobs": [dict], "power_losses": [dict],
    /// "timeseries": {column: NumPy array}} (int64 for counts, float64 else) (`jobs`: each `[[phase.job]]`'s own figures;
    /// `power_losses`: each power cut of the phase and what it did).
    /// `progress(fraction, info)` is called about every 0.2 s; if it raises, the run stops (with a
    /// snapshot plan: at its next sync point, raising `Interrupted` with the exception as its cause).
    #[pyo3(signature = (index, progress = None))]
    fn run_phase<'py>(
        &mut self,
        py: Python<'py>,
        index: &Bound<'py, PyAny>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let index = phase_index(index)?;
        if let Some(message) = &self.broken {
            return Err(InternalError::new_err(format!(
                "this simulator stopped after an earlier error: {message}"
            )));
        }
        let mut callback_error: Option<PyErr> = None;
        let snapshots = self.sim.snapshot_plan().is_some();
        let interrupt = self.sim.interrupt_handle();
        let stop_cause = &mut self.stop_cause;
        if stop_cause.is_some() {
            interrupt.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        let sim = &mut self.sim;
        let result = py.detach(|| {
            let mut report = |p: &Progress| -> bool {
                Python::attach(|py| {
                    let outcome = py.check_signals().and_then(|_| {
                        let Some(cb) = &progress else { return Ok(()) };
                        let info = PyDict::new(py);
                        info.set_item("sim_seconds", p.sim_seconds)?;
                        info.set_item("host_write_bytes", p.host_write_bytes)?;
                        info.set_item("host_read_bytes", p.host_read_bytes)?;
                        info.set_item("requests", p.requests)?;
                        info.set_item("wear_used", p.wear_used)?;
                        info.set_item("reserve_used", p.reserve_used)?;
                        cb.call1(py, (p.fraction, info)).map(drop)
                    });
                    match outcome {
                        Ok(()) => true,
                        // With a snapshot plan, a signal (or the callback's exception)
                        // stops the run at its next sync point, its state in the snapshot.
                        Err(e) if snapshots => {
                            interrupt.store(true, std::sync::atomic::Ordering::Relaxed);
                            stop_cause.get_or_insert(e);
                            true
                        }
                        Err(e) => {
                            callback_error = Some(e);
                            false
                        }
                    }
                })
            };
            guard(|| sim.run_phase(index, &mut report))
        });
        let result = match result {
            Ok(r) => r,
            Err(message) => {
                self.broken = Some(message.0.clone());
                return Err(message.into());
            }
        };
        let phase = match result {
            Ok(r) => r,
            Err(SimError::Aborted) if callback_error.is_some() => {
                return Err(callback_error.unwrap())
            }
            Err(e) => return Err(sim_error(py, e, self.stop_cause.take())),
        };
        phase_dict(py, &phase)
    }

    /// Summary over every phase run so far.
    fn run_summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.sim.run_summary())
    }

    /// Serves the config's phase `index` over NBD at `listen` (`unix:PATH` or `tcp:HOST:PORT`)
    /// until a signal (Ctrl-C, SIGTERM turned into an exception) or, with `once`, the last client's
    /// disconnect; `ready(uri)` is called once the socket listens. Returns what `run_phase` does,
    /// plus `connections` (one dict per client connection), `store_bytes` and `failure` (the
    /// simulation's error that stopped the server, or None).
    /// `store_limit`: bytes of client data held in memory at most (default: the memory
    /// available, as for a run's state).
    /// `client_overhead_us`: realtime replies go out this much before their simulated completion
    /// (None: learned from the clients' turnarounds).
    /// `power_cut_at`: power cuts at these seconds from the start of serving (wall clock in
    /// realtime timing, simulated in fast); `control`: a unix socket taking `cut` and `stop` lines.
    /// Both need `enable_power_model()` before the first phase. `max_connections`: connections
    /// open at once (handshakes included); `idle_timeout_s`: a connection with nothing in
    /// flight that sends no command this long is closed (None: never).
    /// The drive holds what `load_served` read back, if it was; with `snapshot`, the drive and
    /// its data are written there when serving ends (with `snapshot_extra` beside them), for
    /// `load_served`: the result's `snapshot_error` says why that failed, if it did.
    /// `data`: a new drive's data goes to this file (created: it must not exist) instead of memory.
    #[pyo3(signature = (index, listen, timing = "realtime", once = false, store_limit = None, data = None,
                        max_connections = 64, idle_timeout_s = None, client_overhead_us = Some(0.0),
                        power_cut_at = Vec::new(),
                        control = None, ready = None, snapshot = None, snapshot_extra = String::new()))]
    #[allow(clippy::too_many_arguments)]
    fn serve<'py>(
        &mut self,
        py: Python<'py>,
        index: &Bound<'py, PyAny>,
        listen: &str,
        timing: &str,
        once: bool,
        store_limit: Option<u64>,
        data: Option<std::path::PathBuf>,
        max_connections: usize,
        idle_timeout_s: Option<f64>,
        client_overhead_us: Option<f64>,
        power_cut_at: Vec<f64>,
        control: Option<std::path::PathBuf>,
        ready: Option<Py<PyAny>>,
        snapshot: Option<std::path::PathBuf>,
        snapshot_extra: String,
    ) -> PyResult<Bound<'py, PyDict>> {
        let index = phase_index(index)?;
        let power_cut_at = power_cut_at
            .into_iter()
            .map(|s| {
                std::time::Duration::try_from_secs_f64(s)
                    .ok()
                    .filter(|d| d.as_secs() < 1 << 32)
                    .ok_or_else(|| {
                        ConfigError::new_err(format!(
                            "power_cut_at: expected seconds from 0 to 2^32, found {s}"
                        ))
                    })
            })
            .collect::<PyResult<Vec<_>>>()?;
        let client_overhead = match client_overhead_us {
            None => nbd::ClientOverhead::Auto,
            Some(us) if (0.0..=1e6).contains(&us) => {
                nbd::ClientOverhead::Fixed(std::time::Duration::from_nanos((us * 1e3) as u64))
            }
            Some(us) => {
                return Err(PyValueError::new_err(format!(
                    "client_overhead_us must be from 0 to 1e6 (a second), not {us}"
                )))
            }
        };
        let listen = match listen.split_once(':') {
            Some(("unix", path)) => nbd::Listen::Unix(path.into()),
            Some(("tcp", addr)) => nbd::Listen::Tcp(addr.to_string()),
            _ => {
                return Err(PyValueError::new_err(format!(
                    "listen must be \"unix:PATH\" or \"tcp:HOST:PORT\", not {listen:?}"
                )))
            }
        };
        let timing = match timing {
            "realtime" => nbd::Timing::Realtime,
            "fast" => nbd::Timing::Fast,
            other => {
                return Err(PyValueError::new_err(format!(
                    "timing must be \"realtime\" or \"fast\", not {other:?}"
                )))
            }
        };
        let idle_timeout = match idle_timeout_s {
            None => None,
            Some(t) if t > 0.0 && t <= 1e7 => Some(std::time::Duration::from_secs_f64(t)),
            Some(t) => {
                return Err(PyValueError::new_err(format!(
                    "idle_timeout_s must be more than 0 and at most 1e7 seconds, not {t}"
                )))
            }
        };
        let store_limit = store_limit_or_available(store_limit)?;
        let mut server = nbd::Server::bind(&listen).map_err(|e| {
            let at = match &listen {
                nbd::Listen::Unix(p) => format!("unix socket {}", p.display()),
                nbd::Listen::Tcp(a) => format!("TCP address {a}"),
            };
            ConfigError::new_err(format!("cannot listen on {at}: {e}"))
        })?;
        if let Some(path) = &control {
            // Bound before the server says it is ready: a client may use it at once.
            server.bind_control(path).map_err(|e| {
                ConfigError::new_err(format!("control socket {}: {e}", path.display()))
            })?;
        }
        // The data file is created once the sockets are bound: a server that cannot
        // listen leaves no file behind.
        let served = match (self.served.take(), &data) {
            (Some(served), _) => served,
            (None, None) => nbd::ServedData::empty(store_limit),
            (None, Some(path)) => {
                let size = self.sim.config().geometry.user_capacity_bytes;
                nbd::ServedData {
                    store: nbd::store::Store::file(path, size, true).map_err(|e| {
                        ConfigError::new_err(format!("--data {}: {e}", path.display()))
                    })?,
                    unreadable: Vec::new(),
                }
            }
        };
        let stop = std::sync::atomic::AtomicBool::new(false);
        if let Some(cb) = &ready {
            if let Err(e) = cb.call1(py, (server.uri(),)) {
                // Ctrl-C while the ready line is printed: a stop like any other (the
                // drive is still served out and saved), not a failure.
                if !e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
                    return Err(e);
                }
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        }
        let opts = nbd::ServeOptions {
            timing,
            once,
            store_limit,
            max_connections: max_connections.max(1),
            idle_timeout,
            client_overhead,
            power_cut_at,
        };
        let sim = &mut self.sim;
        let data = served;
        let outcome = py.detach(|| {
            std::thread::scope(|scope| {
                let serving = scope.spawn(|| guard(|| server.run(sim, index, &opts, &stop, data)));
                while !serving.is_finished() {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    // A signal's exception (KeyboardInterrupt) stops the server; its results stand.
                    if Python::attach(|py| py.check_signals()).is_err() {
                        stop.store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                }
                serving
                    .join()
                    .unwrap_or_else(|_| Err(Panicked("the server thread panicked".into())))
            })
        });
        let outcome = match outcome {
            Ok(r) => r.map_err(|e| sim_error(py, e, None))?,
            Err(message) => {
                self.broken = Some(message.0.clone());
                return Err(message.into());
            }
        };
        let out = phase_dict(py, &outcome.phase)?;
        out.set_item("connections", to_python(py, &outcome.connections)?)?;
        out.set_item("store_bytes", outcome.store_bytes)?;
        out.set_item(
            "data_file",
            outcome
                .data
                .store
                .data_file()
                .map(|p| p.display().to_string()),
        )?;
        out.set_item("failure", outcome.failure)?;
        out.set_item("client_overhead_us", outcome.client_overhead_us)?;
        out.set_item("served_power_cuts", to_python(py, &outcome.power_cuts)?)?;
        if let Some(path) = snapshot {
            let (sim, text) = (&self.sim, &self.text);
            let saved =
                py.detach(|| nbd::saved::save(&path, sim, text, &snapshot_extra, &outcome.data));
            out.set_item("snapshot_error", saved.err().map(|e| e.to_string()))?;
        }
        Ok(out)
    }

    /// Keeps what power cuts need from the start (the power model, and the integrity oracle with
    /// acknowledgements), for `serve`'s power cuts; before any phase has run.
    fn enable_power_model(&mut self, py: Python<'_>) -> PyResult<()> {
        let sim = &mut self.sim;
        guard(|| sim.enable_power_model())
            .map_err(PyErr::from)?
            .map_err(|e| sim_error(py, e, None))
    }

    /// JESD218's UBER of reading the whole drive back after `hours` powered
    /// off at `temperature_c`, every block at its initial cycles, expected
    /// over the endurance spread (None without an error model).
    fn expected_uber(&self, hours: f64, temperature_c: f64) -> PyResult<Option<f64>> {
        guard(|| self.sim.expected_uber(hours, temperature_c)).map_err(PyErr::from)
    }

    /// Erase count of every block.
    fn erase_counts(&self) -> Vec<u32> {
        self.sim.drive().erase_counts().to_vec()
    }

    /// Checks the mapping invariants; raises SimulationError naming the first violation.
    fn check_invariants(&self) -> PyResult<()> {
        guard(|| self.sim.drive().check_invariants())
            .map_err(PyErr::from)?
            .map_err(|e| SimulationError::new_err(e.to_string()))
    }
}

/// `store_limit`, or the memory available (as for a run's state).
fn store_limit_or_available(store_limit: Option<u64>) -> PyResult<u64> {
    match store_limit {
        Some(limit) => Ok(limit),
        None => Ok(nandlab_core::sim::footprint::available_bytes()
            .map_err(|e| ConfigError::new_err(e.to_string()))?
            .unwrap_or(u64::MAX)),
    }
}

/// Chip presets for the chip test bench: name → one-line description.
#[pyfunction]
fn chip_presets(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for c in chip::CHIPS {
        d.set_item(c.name, c.description)?;
    }
    Ok(d)
}

fn find_chip(name: &str) -> PyResult<&'static chip::Chip> {
    chip::find(name).ok_or_else(|| {
        let names: Vec<&str> = chip::CHIPS.iter().map(|c| c.name).collect();
        ConfigError::new_err(
            match nandlab_core::config::did_you_mean(name, names.iter().copied()) {
                Some(c) => format!("--chip: unknown chip `{name}`, did you mean `{c}`?"),
                None => format!(
                    "--chip: unknown chip `{name}`, expected one of: {}",
                    names.join(", ")
                ),
            },
        )
    })
}

/// Desnoyers' endurance test on `blocks` blocks of a chip: per-block lifetimes
/// (cycles) and a latency trace of the first block.
#[pyfunction]
#[pyo3(signature = (name, blocks = 100, pattern = "single-page", temperature_c = 25.0, seed = 0))]
fn chip_endurance<'py>(
    py: Python<'py>,
    name: &str,
    blocks: usize,
    pattern: &str,
    temperature_c: f64,
    seed: u64,
) -> PyResult<Bound<'py, PyAny>> {
    let c = find_chip(name)?;
    let pattern = match pattern {
        "single-page" => wear::CyclePattern::SinglePage,
        "full-block" => wear::CyclePattern::FullBlock,
        other => {
            return Err(ConfigError::new_err(format!(
                "--pattern: expected single-page or full-block, found `{other}`"
            )))
        }
    };
    if !(-40.0..=125.0).contains(&temperature_c) {
        return Err(ConfigError::new_err(format!(
            "--temperature: expected -40 to 125 °C, found {temperature_c}"
        )));
    }
    if blocks == 0 || blocks > 1_000_000 {
        return Err(ConfigError::new_err(format!(
            "--blocks: expected 1 to 1,000,000, found {blocks}"
        )));
    }
    let conditions = wear::Conditions {
        pattern,
        temperature_c,
        relaxed: false,
    };
    let result = py
        .detach(|| {
            guard(|| {
                let factors = c.block_factors(blocks, seed);
                let runs: Vec<chip::BlockRun> = factors
                    .iter()
                    .enumerate()
                    .map(|(i, &f)| {
                        chip::cycle_to_death(c, f, &conditions, if i == 0 { 2000 } else { 0 })
                    })
                    .collect();
                serde_json::json!({
                    "chip": c,
                    "nominal_endurance": c.nominal_endurance as u64,
                    "conditions": conditions,
                    "seed": seed,
                    "lifetimes": runs.iter().map(|r| r.lifetime).collect::<Vec<_>>(),
                    "trace": {
                        "cycle": runs[0].trace.iter().map(|t| t.0).collect::<Vec<_>>(),
                        "program_us": runs[0].trace.iter().map(|t| t.1).collect::<Vec<_>>(),
                        "erase_us": runs[0].trace.iter().map(|t| t.2).collect::<Vec<_>>(),
                    },
                })
            })
        })
        .map_err(PyErr::from)?;
    to_python(py, &result)
}

/// Read, program and erase latency over a block's life as Desnoyers reports
/// them (worst / typical / best), beside the chip's datasheet values.
#[pyfunction]
fn chip_latency<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    let c = find_chip(name)?;
    let (read, program, erase) = guard(|| chip::latency_spectrum(c)).map_err(PyErr::from)?;
    let v = serde_json::json!({
        "chip": c,
        "read_us": read,
        "program_us": program,
        "erase_us": erase,
        "datasheet": c.datasheet,
    });
    to_python(py, &v)
}

/// Preset name → one-line description.
#[pyfunction]
fn presets(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for (name, description) in builtin::preset_descriptions() {
        d.set_item(name, description)?;
    }
    Ok(d)
}

/// The TOML text of a preset.
#[pyfunction]
fn preset_toml(name: &Bound<'_, PyAny>) -> PyResult<String> {
    let name = &text_argument("preset_toml", "name", name)?;
    builtin::preset_toml(name)
        .map(str::to_string)
        .ok_or_else(|| {
            let names = builtin::preset_names();
            ConfigError::new_err(
                match nandlab_core::config::did_you_mean(name, names.iter().copied()) {
                    Some(c) => format!("unknown preset `{name}`, did you mean `{c}`?"),
                    None => format!(
                        "unknown preset `{name}`, expected one of: {}",
                        names.join(", ")
                    ),
                },
            )
        })
}

/// The trace formats `trace_stats` and trace phases read.
#[pyfunction]
fn trace_formats() -> Vec<&'static str> {
    trace::TraceFormat::names()
}

/// A trace's composition, sizes, inter-arrival times, footprint and reuse
/// CDF, in one streaming pass (`format` None: detected).
#[pyfunction]
#[pyo3(signature = (path, format = None, skip_bad = false))]
fn trace_stats<'py>(
    py: Python<'py>,
    path: std::path::PathBuf,
    format: Option<&str>,
    skip_bad: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let format = match format {
        None => None,
        Some(f) => Some(trace::TraceFormat::parse(f).ok_or_else(|| {
            TraceError::new_err(format!(
                "unknown trace format `{f}`, expected one of: {}",
                trace::TraceFormat::names().join(", ")
            ))
        })?),
    };
    let on_error = if skip_bad {
        trace::OnError::Skip
    } else {
        trace::OnError::Stop
    };
    let stats = py
        .detach(|| {
            guard(|| {
                let mut reader = trace::TraceReader::open(&path, format, on_error)?;
                trace::stats::summarize(&mut reader)
            })
        })
        .map_err(PyErr::from)?
        .map_err(|e| TraceError::new_err(e.to_string()))?;
    to_python(py, &stats)
}

/// A phase's index as Python gives it: a whole number from 0 (a bool, a
/// negative or a float is a ConfigError naming it, not pyo3's conversion error).
fn phase_index(index: &Bound<'_, PyAny>) -> PyResult<usize> {
    let whole = if index.is_instance_of::<pyo3::types::PyBool>() {
        None
    } else {
        index.extract::<u64>().ok()
    };
    match whole.and_then(|i| usize::try_from(i).ok()) {
        Some(i) => Ok(i),
        None => Err(ConfigError::new_err(format!(
            "index: expected a phase's number, a whole number from 0, found {}",
            index
                .repr()
                .map(|r| r.to_string())
                .unwrap_or_else(|_| "a value without a repr".into())
        ))),
    }
}

/// A seed as Python gives it: a whole number from 0 to 2⁶⁴ − 1 (a bool is
/// none); a ConfigError naming it otherwise.
fn seed_argument(value: &Bound<'_, PyAny>) -> PyResult<u64> {
    let whole = if value.is_instance_of::<pyo3::types::PyBool>() {
        None
    } else {
        value.extract::<u64>().ok()
    };
    whole.ok_or_else(|| {
        ConfigError::new_err(format!(
            "seed: expected a whole number from 0 to 18446744073709551615, found {}",
            value
                .repr()
                .map(|r| r.to_string().chars().take(40).collect::<String>())
                .unwrap_or_else(|_| "a value without a repr".into())
        ))
    })
}

/// An argument that must be a `str`: its text, or a ConfigError naming the
/// function and the argument (never pyo3's TypeError).
fn text_argument(function: &str, name: &str, value: &Bound<'_, PyAny>) -> PyResult<String> {
    value.extract::<String>().map_err(|_| {
        if value.is_instance_of::<pyo3::types::PyString>() {
            return ConfigError::new_err(format!(
                "{function}(): {name}: text with a lone surrogate (\\ud800-\\udfff), which UTF-8 cannot write"
            ));
        }
        let kind = value
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "an object".into());
        ConfigError::new_err(format!(
            "{function}(): {name}: expected text (a str), found {kind}"
        ))
    })
}

/// An argument that must be a path (a `str` or an `os.PathLike` giving one):
/// it, or a ConfigError naming the function and the argument.
fn path_argument(
    function: &str,
    name: &str,
    value: &Bound<'_, PyAny>,
) -> PyResult<std::path::PathBuf> {
    let text = value
        .py()
        .import("os")
        .and_then(|os| os.call_method1("fspath", (value,)))
        .ok()
        .and_then(|p| p.extract::<String>().ok());
    match text {
        Some(t) if !t.contains('\0') => Ok(t.into()),
        _ => {
            let kind = value
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_else(|_| "an object".into());
            Err(ConfigError::new_err(format!(
                "{function}(): {name}: expected a path (a str or os.PathLike, without NUL), found {kind}"
            )))
        }
    }
}

/// A SnapshotError if `path` is there but not a regular file: a FIFO would
/// block the read for good (deaf to Ctrl-C), a device never holds a snapshot.
fn not_a_special_file(path: &std::path::Path) -> PyResult<()> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => Err(SnapshotError::new_err(format!(
            "{}: not a regular file (a directory, a FIFO or a device), where a snapshot is expected",
            path.display()
        ))),
        _ => Ok(()),
    }
}

/// A size as configs read it (`"4KiB"` is 4,096 bytes, `"8KB"` 8,000), in
/// bytes; ConfigError (a ValueError) with the engine's words.
#[pyfunction]
fn parse_size(text: &Bound<'_, PyAny>) -> PyResult<u64> {
    let text = text_argument("parse_size", "text", text)?;
    nandlab_core::units::parse_size(&text).map_err(|e| ConfigError::new_err(e.to_string()))
}

/// A share as configs read it (`"30 %"`, `"0.3"`; a bare number above 1
/// refused with what it would mean); ConfigError (a ValueError) with the
/// engine's words.
#[pyfunction]
fn parse_share(text: &Bound<'_, PyAny>) -> PyResult<f64> {
    let text = text_argument("parse_share", "text", text)?;
    nandlab_core::units::parse_share(&text).map_err(|e| ConfigError::new_err(e.to_string()))
}

/// Why a drive can die: each summary `death_cause` and what a table says for it.
#[pyfunction]
fn death_causes(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for c in nandlab_core::DeathCause::ALL {
        d.set_item(c.name(), c.describe())?;
    }
    Ok(d)
}

/// A config's derived drive figures (geometry, capacities, interface), by key
/// in alphabetical order: `Simulator.device`, and what `check_config` returns.
fn drive_figures<'py>(py: Python<'py>, cfg: &Config) -> PyResult<Bound<'py, PyDict>> {
    let d = &cfg.device;
    let mut figures = BTreeMap::new();
    for (key, value) in to_python(py, &cfg.geometry)?.cast_into::<PyDict>()?.iter() {
        figures.insert(key.extract::<String>()?, value);
    }
    figures.insert("preset".into(), to_python(py, &d.preset)?);
    figures.insert("capacity".into(), to_python(py, &d.capacity)?);
    figures.insert("interface".into(), to_python(py, &d.interface.name)?);
    figures.insert("link_rate".into(), to_python(py, &d.interface.link_rate)?);
    figures.insert("channel_rate".into(), to_python(py, &d.channel_rate)?);
    figures.insert("write_buffer".into(), to_python(py, &d.write_buffer)?);
    figures.insert("multiplane".into(), to_python(py, &d.multiplane)?);
    figures.into_pyobject(py)
}

/// Checks an experiment's TOML text as a run would read it (every key,
/// the drive's shape and spare space) without building the drive, and returns
/// the drive's figures (as `Simulator.device`); ConfigError with the engine's words.
#[pyfunction]
#[pyo3(signature = (config, source = None, format = None))]
fn check_config<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyAny>,
    source: Option<&Bound<'py, PyAny>>,
    format: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let config = text_argument("check_config", "config", config)?;
    let source = match source {
        Some(s) => text_argument("check_config", "source", s)?,
        None => "<config>".into(),
    };
    let format = match format {
        Some(f) => text_argument("check_config", "format", f)?,
        None => "toml".into(),
    };
    drive_figures(py, &parse_config(&config, &format, &source)?)
}

/// A config's text in `format` ("toml" or "json") as the engine reads it,
/// parsed under the guard: a panic there is nandlab's InternalError (an
/// Exception), never pyo3's PanicException; a bad config a ConfigError.
fn parse_config(config: &str, format: &str, source: &str) -> PyResult<Config> {
    let parsed = match format {
        "toml" => guard(|| Config::from_toml(config, source)),
        "json" => guard(|| Config::from_json(config)),
        other => {
            return Err(ConfigError::new_err(format!(
                "format: expected \"toml\" or \"json\", found {other:?}"
            )))
        }
    };
    parsed
        .map_err(PyErr::from)?
        .map_err(|e| ConfigError::new_err(e.to_string()))
}

/// Tests only: panics inside the guard every entry point uses, to show that a
/// Rust panic reaches Python as an `InternalError` with its message.
#[pyfunction]
fn _panic_for_test(message: &str) -> PyResult<()> {
    guard(|| panic!("{message}")).map_err(PyErr::from)
}

/// The built-in default experiment as TOML text.
#[pyfunction]
fn default_config_toml() -> &'static str {
    builtin::DEFAULT_CONFIG
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("SimulationError", py.get_type::<SimulationError>())?;
    m.add("TraceError", py.get_type::<TraceError>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    m.add("SnapshotError", py.get_type::<SnapshotError>())?;
    m.add("Interrupted", py.get_type::<Interrupted>())?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    m.add_function(wrap_pyfunction!(parse_size, m)?)?;
    m.add_function(wrap_pyfunction!(check_config, m)?)?;
    m.add_function(wrap_pyfunction!(parse_share, m)?)?;
    m.add_function(wrap_pyfunction!(death_causes, m)?)?;
    quiet_panics();
    m.add_class::<Simulator>()?;
    // A phase's time-series columns, in order, and those of whole numbers (a snapshot's kept series is checked against them).
    m.add("TIMESERIES_COLUMNS", ROW_COLUMNS.to_vec())?;
    m.add("TIMESERIES_INTEGER_COLUMNS", ROW_INTEGER_COLUMNS.to_vec())?;
    m.add("MAX_NAME_CHARS", nandlab_core::config::MAX_NAME_CHARS)?;
    m.add_function(wrap_pyfunction!(preset_toml, m)?)?;
    m.add_function(wrap_pyfunction!(default_config_toml, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(chip_presets, m)?)?;
    m.add_function(wrap_pyfunction!(chip_endurance, m)?)?;
    m.add_function(wrap_pyfunction!(chip_latency, m)?)?;
    m.add_function(wrap_pyfunction!(trace_formats, m)?)?;
    m.add_function(wrap_pyfunction!(trace_stats, m)?)?;
    Ok(())
}
