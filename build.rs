//! Rebuilds when a migration is added, changed or removed: `sqlx::migrate!`
//! embeds `migrations/pg` at compile time, and on stable Rust a proc macro
//! cannot tell cargo which files it read (sqlx's documented build script).
fn main() {
    println!("cargo:rerun-if-changed=migrations/pg");
}
