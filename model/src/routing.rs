//! Instance-hash routing to execution lanes: affinity only (R12). The hash's salt is the
//! state the mis-route fault changes mid-run; a wrong lane is bounced by the claim.

use std::cell::Cell;

use crate::ids::InstanceId;

/// The routing function shared by every replica.
pub struct Routing {
    /// Lanes per replica. Invariant: at least 1.
    lanes: u32,
    /// The hash's salt; 0 until the mis-route fault changes it.
    salt: Cell<u64>,
}

impl Routing {
    /// Routing over `lanes` lanes per replica.
    pub fn new(lanes: u32) -> Routing {
        assert!(lanes >= 1, "a replica has at least one lane");
        Routing { lanes, salt: Cell::new(0) }
    }

    /// The execution lane an instance hashes to.
    pub fn home_lane(&self, instance: InstanceId) -> u16 {
        // A fixed multiplicative hash: stable across platforms and runs.
        let h = (u64::from(instance.0) ^ self.salt.get()).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
        let lane = (h % u64::from(self.lanes)) as u16;
        debug_assert!(u32::from(lane) < self.lanes);
        lane
    }

    /// Changes the hash (the mis-route fault's "routing hash changes mid-run").
    pub fn change_salt(&self, salt: u64) {
        self.salt.set(salt);
    }
}
