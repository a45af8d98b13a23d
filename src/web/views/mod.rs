//! The page's cards, one module each (the photo card has two: the picture and its explanation;
//! the training card's charts and probe panel have theirs). A view reads and writes the shared
//! state in [`super::app`], draws with [`super::dom`], and says what it changed through
//! [`super::app::changed`]; it never calls another view. `page.rs` wires them together.

pub mod charts;
pub mod collection;
pub mod compute;
pub mod dataset;
pub mod distance;
pub mod explanation;
pub mod model;
pub mod photo;
pub mod positions;
pub mod probe;
pub mod runs;
pub mod site;
pub mod test_set;
pub mod training;
pub mod weights;
