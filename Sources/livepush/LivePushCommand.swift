import ArgumentParser

@main
struct LivePushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "livepush",
        abstract: "Push media to an RTMP server, or receive it.",
        subcommands: [PushCommand.self, PlayoutCommand.self, ChannelsCommand.self, ServeCommand.self, LoopbackCommand.self, SignCommand.self, VerifyCommand.self],
        defaultSubcommand: nil
    )
}
