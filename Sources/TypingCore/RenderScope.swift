/// Which viewers of a conversation a render looks at.
enum RenderScope {
    /// Every member, in join order: the typers or a typer's name changed.
    case everyone
    /// One member slot: a member who just joined.
    case member(Int)
}
